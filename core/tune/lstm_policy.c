/*
 * tune/lstm_policy.c — LSTM policy: forward, sampling, back-propagation through
 * time, Adam (see policy.h).
 *
 * Weights (one flat array): W_in [E x D_in], b_in [E], W_x [4H x E],
 * W_h [4H x H], b_g [4H] (gate order i, f, g, o), W_out [D_out x H],
 * b_out [D_out]. D_out = sum of parameter sizes; the rows of W_out for
 * parameter t start at off[t]. D_in = 1 + D_out: token 0 is the start,
 * token 1 + off[t] + a means "value a was chosen for parameter t".
 * The forward pass keeps every step's activations so that the backward pass
 * is exact; gradients are checked against finite differences in
 * tests/unit/test_tune_policy.c.
 */
#include "tune/lstm_policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/rng.h"

#define MAXT 16
#define MAXV 16

struct pb_tune_policy {
	int n, H, E, din, dout;
	int sizes[MAXT], off[MAXT];
	int n_w;
	double *w, *m, *v; /* weights and Adam moments */
	long adam_t;
	/* offsets into w */
	int o_win, o_bin, o_wx, o_wh, o_bg, o_wout, o_bout;
	/* per-step cache of the last forward pass */
	int tok[MAXT];
	double *e, *hp, *cp, *gi, *gf, *gg, *go, *c, *h, *tc, *p;
};

static double sigm(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

pb_tune_policy *pb_tune_policy_new(const int *sizes, int n, int hidden, int embed, uint64_t seed)
{
	if (n < 1 || n > MAXT || hidden < 1 || embed < 1 || hidden > 64 || embed > 64)
		return NULL;
	pb_tune_policy *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->n = n, p->H = hidden, p->E = embed;
	for (int t = 0; t < n; t++) {
		if (sizes[t] < 1 || sizes[t] > MAXV) {
			free(p);
			return NULL;
		}
		p->sizes[t] = sizes[t];
		p->off[t] = p->dout;
		p->dout += sizes[t];
	}
	p->din = 1 + p->dout;
	int H = hidden, E = embed, k = 0;
	p->o_win = k, k += E * p->din;
	p->o_bin = k, k += E;
	p->o_wx = k, k += 4 * H * E;
	p->o_wh = k, k += 4 * H * H;
	p->o_bg = k, k += 4 * H;
	p->o_wout = k, k += p->dout * H;
	p->o_bout = k, k += p->dout;
	p->n_w = k;
	p->w = calloc((size_t)k, sizeof *p->w);
	p->m = calloc((size_t)k, sizeof *p->m);
	p->v = calloc((size_t)k, sizeof *p->v);
	size_t per = (size_t)MAXT * (size_t)(4 * H + E);
	p->e = calloc(per * 12, sizeof(double));
	if (!p->w || !p->m || !p->v || !p->e) {
		pb_tune_policy_free(p);
		return NULL;
	}
	/* carve the cache: each array MAXT x H (E for e, MAXV for p) */
	double *q = p->e + MAXT * E;
	double **arr[] = {&p->hp, &p->cp, &p->gi, &p->gf, &p->gg, &p->go, &p->c, &p->h, &p->tc};
	for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++) {
		*arr[i] = q;
		q += MAXT * H;
	}
	p->p = q;
	uint64_t rng = seed ^ 0x5eedull;
	/* uniform init in +-1/sqrt(fan_in); forget-gate bias 1 */
	for (int i = 0; i < k; i++) {
		double fan = i < p->o_bin ? 1 : i < p->o_wh ? E : i < p->o_bg ? H : H;
		p->w[i] = (2 * pb_rng_unif(&rng) - 1) / sqrt(fan);
	}
	for (int i = p->o_bin; i < p->o_bin + E; i++)
		p->w[i] = 0;
	for (int i = 0; i < 4 * H; i++)
		p->w[p->o_bg + i] = i >= H && i < 2 * H ? 1.0 : 0.0;
	for (int i = p->o_bout; i < p->o_bout + p->dout; i++)
		p->w[i] = 0;
	for (int i = p->o_wout; i < p->o_bout; i++)
		p->w[i] *= 0.1; /* start close to uniform */
	return p;
}

void pb_tune_policy_free(pb_tune_policy *p)
{
	if (!p)
		return;
	free(p->w);
	free(p->m);
	free(p->v);
	free(p->e);
	free(p);
}

int pb_tune_policy_n_weights(const pb_tune_policy *p)
{
	return p->n_w;
}

double *pb_tune_policy_weights(pb_tune_policy *p)
{
	return p->w;
}

/* One forward step t with input token tok; fills the cache and p[t]. */
static void step_fwd(pb_tune_policy *p, int t, int tok)
{
	const int H = p->H, E = p->E;
	const double *w = p->w;
	double *e = p->e + t * E, *h = p->h + t * H, *c = p->c + t * H;
	double *hp = p->hp + t * H, *cp = p->cp + t * H;
	p->tok[t] = tok;
	for (int j = 0; j < H; j++) {
		hp[j] = t ? p->h[(t - 1) * H + j] : 0;
		cp[j] = t ? p->c[(t - 1) * H + j] : 0;
	}
	for (int j = 0; j < E; j++)
		e[j] = tanh(w[p->o_win + j * p->din + tok] + w[p->o_bin + j]);
	for (int gate = 0; gate < 4; gate++)
		for (int j = 0; j < H; j++) {
			int row = gate * H + j;
			double z = w[p->o_bg + row];
			const double *wx = w + p->o_wx + row * E, *wh = w + p->o_wh + row * H;
			for (int k = 0; k < E; k++)
				z += wx[k] * e[k];
			for (int k = 0; k < H; k++)
				z += wh[k] * hp[k];
			double *dst = gate == 0   ? p->gi
			              : gate == 1 ? p->gf
			              : gate == 2 ? p->gg
			                          : p->go;
			dst[t * H + j] = gate == 2 ? tanh(z) : sigm(z);
		}
	for (int j = 0; j < H; j++) {
		int q = t * H + j;
		c[j] = p->gf[q] * cp[j] + p->gi[q] * p->gg[q];
		p->tc[q] = tanh(c[j]);
		h[j] = p->go[q] * p->tc[q];
	}
	double *pr = p->p + t * MAXV, mx = -1e300;
	for (int a = 0; a < p->sizes[t]; a++) {
		int row = p->off[t] + a;
		double z = w[p->o_bout + row];
		for (int k = 0; k < H; k++)
			z += w[p->o_wout + row * H + k] * h[k];
		pr[a] = z;
		if (z > mx)
			mx = z;
	}
	double sum = 0;
	for (int a = 0; a < p->sizes[t]; a++)
		sum += pr[a] = exp(pr[a] - mx);
	for (int a = 0; a < p->sizes[t]; a++)
		pr[a] /= sum;
}

static int token(const pb_tune_policy *p, int t, const int *actions)
{
	return t ? 1 + p->off[t - 1] + actions[t - 1] : 0;
}

void pb_tune_policy_sample(pb_tune_policy *p, uint64_t *rng, int *actions, double *logp)
{
	double lp = 0;
	for (int t = 0; t < p->n; t++) {
		step_fwd(p, t, token(p, t, actions));
		const double *pr = p->p + t * MAXV;
		double u = pb_rng_unif(rng), acc = 0;
		int a = p->sizes[t] - 1;
		for (int k = 0; k < p->sizes[t]; k++) {
			acc += pr[k];
			if (u < acc) {
				a = k;
				break;
			}
		}
		actions[t] = a;
		lp += log(pr[a] > 1e-300 ? pr[a] : 1e-300);
	}
	if (logp)
		*logp = lp;
}

double pb_tune_policy_prob(pb_tune_policy *p, const int *actions, int t, int v)
{
	for (int s = 0; s <= t; s++)
		step_fwd(p, s, token(p, s, actions));
	return p->p[t * MAXV + v];
}

double pb_tune_policy_logprob(pb_tune_policy *p, const int *actions, double scale, double *grad)
{
	double lp = 0;
	for (int t = 0; t < p->n; t++) {
		step_fwd(p, t, token(p, t, actions));
		double pa = p->p[t * MAXV + actions[t]];
		lp += log(pa > 1e-300 ? pa : 1e-300);
	}
	if (!grad)
		return lp;
	const int H = p->H, E = p->E;
	const double *w = p->w;
	double dh[64 * 4], dc[64 * 4], dz[4 * 64 * 4], de[64 * 4];
	if (H > 64 || E > 64)
		return lp;
	memset(dh, 0, sizeof dh);
	memset(dc, 0, sizeof dc);
	for (int t = p->n - 1; t >= 0; t--) {
		const double *h = p->h + t * H, *pr = p->p + t * MAXV;
		/* softmax + log: d log p_a / d logit_k = [k == a] - p_k */
		for (int a = 0; a < p->sizes[t]; a++) {
			int row = p->off[t] + a;
			double dl = scale * ((a == actions[t]) - pr[a]);
			grad[p->o_bout + row] += dl;
			for (int k = 0; k < H; k++) {
				grad[p->o_wout + row * H + k] += dl * h[k];
				dh[k] += dl * w[p->o_wout + row * H + k];
			}
		}
		for (int j = 0; j < H; j++) {
			int q = t * H + j;
			double i = p->gi[q], f = p->gf[q], g = p->gg[q], o = p->go[q],
			       tc = p->tc[q];
			double dcj = dc[j] + dh[j] * o * (1 - tc * tc);
			dz[0 * H + j] = dcj * g * i * (1 - i);
			dz[1 * H + j] = dcj * p->cp[q] * f * (1 - f);
			dz[2 * H + j] = dcj * i * (1 - g * g);
			dz[3 * H + j] = dh[j] * tc * o * (1 - o);
			dc[j] = dcj * f; /* to step t-1 */
		}
		const double *e = p->e + t * E, *hp = p->hp + t * H;
		memset(de, 0, sizeof(double) * (size_t)E);
		memset(dh, 0, sizeof(double) * (size_t)H);
		for (int row = 0; row < 4 * H; row++) {
			double d = dz[row];
			if (d == 0)
				continue;
			grad[p->o_bg + row] += d;
			for (int k = 0; k < E; k++) {
				grad[p->o_wx + row * E + k] += d * e[k];
				de[k] += d * w[p->o_wx + row * E + k];
			}
			for (int k = 0; k < H; k++) {
				grad[p->o_wh + row * H + k] += d * hp[k];
				dh[k] += d * w[p->o_wh + row * H + k];
			}
		}
		for (int k = 0; k < E; k++) {
			double dpre = de[k] * (1 - e[k] * e[k]);
			grad[p->o_win + k * p->din + p->tok[t]] += dpre;
			grad[p->o_bin + k] += dpre;
		}
	}
	return lp;
}

void pb_tune_policy_ascend(pb_tune_policy *p, const double *grad, double lr)
{
	const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
	p->adam_t++;
	double c1 = 1 - pow(b1, (double)p->adam_t), c2 = 1 - pow(b2, (double)p->adam_t);
	for (int i = 0; i < p->n_w; i++) {
		p->m[i] = b1 * p->m[i] + (1 - b1) * grad[i];
		p->v[i] = b2 * p->v[i] + (1 - b2) * grad[i] * grad[i];
		p->w[i] += lr * (p->m[i] / c1) / (sqrt(p->v[i] / c2) + eps);
	}
}
