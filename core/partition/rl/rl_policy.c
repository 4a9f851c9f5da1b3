/*
 * partition/rl/rl_policy.c — position-shared MLP forward/backward, masked softmax, entropy
 * bonus and Adam (rl_policy.h). Numerically: the softmax subtracts the largest valid logit;
 * log p_j uses that shifted form, so masked-out actions never enter a log.
 */
#include "partition/rl/rl_policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { NZ_MAX = 256 }; /* inputs per position handled by the sparse path */

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

long pb_rl_policy_param_count(int n_in, int n_hidden, int n_types)
{
	return (long)n_hidden * n_in + n_hidden + (long)n_types * n_hidden + n_types;
}

pb_rl_policy *pb_rl_policy_new(int n_in, int n_hidden, int n_types, int n_pos, uint64_t seed)
{
	pb_rl_policy *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->n_in = n_in;
	p->n_hidden = n_hidden;
	p->n_types = n_types;
	p->n_pos = n_pos;
	p->n_out = n_types * n_pos;
	p->n_params = (int)pb_rl_policy_param_count(n_in, n_hidden, n_types);
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
	for (int i = 0; i < n_types * n_hidden; i++)
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
	const int ni = p->n_in, nh = p->n_hidden, nt = p->n_types, np = p->n_pos;
	const double *w1 = p->w, *b1 = w1 + nh * ni, *w2 = b1 + nh, *b2 = w2 + nt * nh;
	double zmax = -INFINITY;
	for (int q = 0; q < np; q++) {
		const double *xq = x + (size_t)q * ni;
		double *hq = h + (size_t)q * nh;
		int any = 0;
		for (int k = 0; k < nt && !any; k++)
			any = !mask || mask[k * np + q];
		if (!any) { /* every action of this position is masked: skip it */
			for (int k = 0; k < nt; k++)
				prob[k * np + q] = 0;
			memset(hq, 0, (size_t)nh * sizeof *hq);
			continue;
		}
		/* Inputs are often 0 (flags, missing neighbours): sum the others. */
		int nz = 0, idx[NZ_MAX];
		if (ni <= NZ_MAX)
			for (int i = 0; i < ni; i++)
				if (xq[i] != 0)
					idx[nz++] = i;
		for (int j = 0; j < nh; j++) {
			const double *row = w1 + (size_t)j * ni;
			double s = b1[j];
			if (ni <= NZ_MAX)
				for (int k = 0; k < nz; k++)
					s += row[idx[k]] * xq[idx[k]];
			else
				for (int i = 0; i < ni; i++)
					s += row[i] * xq[i];
			hq[j] = s / (1 + fabs(s)); /* softsign */
		}
		for (int k = 0; k < nt; k++) {
			int o = k * np + q;
			if (mask && !mask[o]) {
				prob[o] = 0;
				continue;
			}
			const double *row = w2 + (size_t)k * nh;
			double s = b2[k];
			for (int j = 0; j < nh; j++)
				s += row[j] * hq[j];
			prob[o] = s;
			if (s > zmax)
				zmax = s;
		}
	}
	double sum = 0;
	for (int o = 0; o < p->n_out; o++) {
		if (mask && !mask[o])
			continue;
		prob[o] = exp(prob[o] - zmax);
		sum += prob[o];
	}
	for (int o = 0; o < p->n_out; o++)
		prob[o] /= sum;
}

double pb_rl_policy_backward(const pb_rl_policy *p, const double *x, const unsigned char *mask,
                             const double *h, const double *prob, int action, double advantage,
                             double beta, double *grad, double *scratch)
{
	const int ni = p->n_in, nh = p->n_hidden, nt = p->n_types, np = p->n_pos;
	const double *w1 = p->w, *b1 = w1 + nh * ni, *w2 = b1 + nh;
	double *g1 = grad, *gb1 = g1 + nh * ni, *g2 = gb1 + nh, *gb2 = g2 + nt * nh;
	double H = 0;
	for (int o = 0; o < p->n_out; o++)
		if ((!mask || mask[o]) && prob[o] > 0)
			H -= prob[o] * log(prob[o]);
	double loss = -advantage * log(prob[action] > 0 ? prob[action] : 1e-300) - beta * H;
	double *dh = scratch;
	memset(dh, 0, (size_t)np * nh * sizeof *dh);
	for (int o = 0; o < p->n_out; o++) {
		if (mask && !mask[o])
			continue;
		int k = o / np, q = o % np;
		double pk = prob[o];
		double lp = pk > 0 ? log(pk) : 0;
		double dz = -advantage * ((o == action) - pk) + beta * pk * (lp + H);
		if (dz == 0)
			continue;
		gb2[k] += dz;
		double *grow = g2 + (size_t)k * nh, *dhq = dh + (size_t)q * nh;
		const double *wrow = w2 + (size_t)k * nh, *hq = h + (size_t)q * nh;
		for (int j = 0; j < nh; j++) {
			grow[j] += dz * hq[j];
			dhq[j] += dz * wrow[j];
		}
	}
	for (int q = 0; q < np; q++) {
		const double *hq = h + (size_t)q * nh, *dhq = dh + (size_t)q * nh;
		const double *xq = x + (size_t)q * ni;
		int any = 0;
		for (int k = 0; k < nt && !any; k++)
			any = !mask || mask[k * np + q];
		if (!any) /* no logit of this position: no gradient */
			continue;
		int nz = 0, idx[NZ_MAX];
		if (ni <= NZ_MAX)
			for (int i = 0; i < ni; i++)
				if (xq[i] != 0)
					idx[nz++] = i;
		for (int j = 0; j < nh; j++) {
			double d = 1 - fabs(hq[j]); /* softsign'(s) = (1 - |h|)^2 */
			double da = dhq[j] * d * d;
			if (da == 0)
				continue;
			gb1[j] += da;
			double *grow = g1 + (size_t)j * ni;
			if (ni <= NZ_MAX)
				for (int k = 0; k < nz; k++)
					grow[idx[k]] += da * xq[idx[k]];
			else
				for (int i = 0; i < ni; i++)
					grow[i] += da * xq[i];
		}
	}
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
