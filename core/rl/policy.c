/*
 * policy.c — MLP forward/backward, masked softmax, entropy bonus and Adam
 * (policy.h). Numerically: the softmax subtracts the largest valid logit;
 * log p_j uses that shifted form, so masked-out actions never enter a log.
 */
#include "policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t pb_rl_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double pb_rl_uniform(uint64_t *s)
{
	return (double)(pb_rl_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}

pb_rl_policy *pb_rl_policy_new(int n_in, int n_hidden, int n_out, uint64_t seed)
{
	pb_rl_policy *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->n_in = n_in;
	p->n_hidden = n_hidden;
	p->n_out = n_out;
	p->n_params = n_hidden * n_in + n_hidden + n_out * n_hidden + n_out;
	p->w = calloc((size_t)p->n_params, sizeof *p->w);
	if (!p->w) {
		free(p);
		return NULL;
	}
	uint64_t s = seed ^ 0x5eed5eedULL;
	double s1 = 1.0 / sqrt((double)n_in), s2 = 1.0 / sqrt((double)n_hidden);
	double *w1 = p->w, *w2 = p->w + n_hidden * n_in + n_hidden;
	for (int i = 0; i < n_hidden * n_in; i++)
		w1[i] = (2 * pb_rl_uniform(&s) - 1) * s1;
	/* Small output weights: the initial policy is close to uniform. */
	for (int i = 0; i < n_out * n_hidden; i++)
		w2[i] = (2 * pb_rl_uniform(&s) - 1) * s2 * 0.1;
	return p;
}

void pb_rl_policy_free(pb_rl_policy *p)
{
	if (!p)
		return;
	free(p->w);
	free(p);
}

void pb_rl_policy_forward(const pb_rl_policy *p, const double *x, const unsigned char *mask,
                          double *h, double *prob)
{
	const int ni = p->n_in, nh = p->n_hidden, no = p->n_out;
	const double *w1 = p->w, *b1 = w1 + nh * ni, *w2 = b1 + nh, *b2 = w2 + no * nh;
	for (int j = 0; j < nh; j++) {
		const double *row = w1 + (size_t)j * ni;
		double s = b1[j];
		for (int i = 0; i < ni; i++)
			s += row[i] * x[i];
		h[j] = tanh(s);
	}
	double zmax = -INFINITY;
	for (int k = 0; k < no; k++) {
		if (mask && !mask[k]) {
			prob[k] = 0;
			continue;
		}
		const double *row = w2 + (size_t)k * nh;
		double s = b2[k];
		for (int j = 0; j < nh; j++)
			s += row[j] * h[j];
		prob[k] = s;
		if (s > zmax)
			zmax = s;
	}
	double sum = 0;
	for (int k = 0; k < no; k++) {
		if (mask && !mask[k])
			continue;
		prob[k] = exp(prob[k] - zmax);
		sum += prob[k];
	}
	for (int k = 0; k < no; k++)
		prob[k] /= sum;
}

double pb_rl_policy_backward(const pb_rl_policy *p, const double *x, const unsigned char *mask,
                             const double *h, const double *prob, int action, double advantage,
                             double beta, double *grad)
{
	const int ni = p->n_in, nh = p->n_hidden, no = p->n_out;
	const double *w1 = p->w, *b1 = w1 + nh * ni, *w2 = b1 + nh;
	double *g1 = grad, *gb1 = g1 + nh * ni, *g2 = gb1 + nh, *gb2 = g2 + no * nh;
	(void)b1;
	double H = 0;
	for (int k = 0; k < no; k++)
		if ((!mask || mask[k]) && prob[k] > 0)
			H -= prob[k] * log(prob[k]);
	double loss = -advantage * log(prob[action] > 0 ? prob[action] : 1e-300) - beta * H;
	double dh[1024];
	double *dhp = nh <= 1024 ? dh : calloc((size_t)nh, sizeof *dhp);
	memset(dhp, 0, (size_t)nh * sizeof *dhp);
	for (int k = 0; k < no; k++) {
		if (mask && !mask[k])
			continue;
		double pk = prob[k];
		double lp = pk > 0 ? log(pk) : 0;
		double dz = -advantage * ((k == action) - pk) + beta * pk * (lp + H);
		if (dz == 0)
			continue;
		gb2[k] += dz;
		double *grow = g2 + (size_t)k * nh;
		const double *wrow = w2 + (size_t)k * nh;
		for (int j = 0; j < nh; j++) {
			grow[j] += dz * h[j];
			dhp[j] += dz * wrow[j];
		}
	}
	for (int j = 0; j < nh; j++) {
		double da = dhp[j] * (1 - h[j] * h[j]);
		if (da == 0)
			continue;
		gb1[j] += da;
		double *grow = g1 + (size_t)j * ni;
		for (int i = 0; i < ni; i++)
			grow[i] += da * x[i];
	}
	if (dhp != dh)
		free(dhp);
	return loss;
}

int pb_rl_adam_init(pb_rl_adam *a, int n, double lr, double clip)
{
	memset(a, 0, sizeof *a);
	a->lr = lr;
	a->beta1 = 0.9;
	a->beta2 = 0.999;
	a->eps = 1e-8;
	a->clip = clip;
	a->n = n;
	a->m = calloc((size_t)n, sizeof *a->m);
	a->v = calloc((size_t)n, sizeof *a->v);
	return a->m && a->v ? 0 : -1;
}

double pb_rl_adam_step(pb_rl_adam *a, double *w, double *grad)
{
	double norm = 0;
	for (int i = 0; i < a->n; i++)
		norm += grad[i] * grad[i];
	norm = sqrt(norm);
	double scale = a->clip > 0 && norm > a->clip ? a->clip / norm : 1.0;
	a->t++;
	double c1 = 1 - pow(a->beta1, (double)a->t), c2 = 1 - pow(a->beta2, (double)a->t);
	for (int i = 0; i < a->n; i++) {
		double g = grad[i] * scale;
		a->m[i] = a->beta1 * a->m[i] + (1 - a->beta1) * g;
		a->v[i] = a->beta2 * a->v[i] + (1 - a->beta2) * g * g;
		w[i] -= a->lr * (a->m[i] / c1) / (sqrt(a->v[i] / c2) + a->eps);
	}
	return norm;
}

void pb_rl_adam_free(pb_rl_adam *a)
{
	free(a->m);
	free(a->v);
	a->m = a->v = NULL;
}
