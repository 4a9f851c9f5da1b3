/*
 * tune/conv2d.c — direct NCHW convolution driver and the naive reference.
 *
 * Algorithm: the input of one image is first copied into a zero-padded,
 * stride-split buffer X[c][y][s][x] = in[c][y - pad][x * stride + s - pad]
 * (x over the output width rounded up to 32), so that for every (c, r, s)
 * the inputs of consecutive output columns are contiguous whatever the
 * stride, and padding needs no bounds tests. A register tile computes kb
 * output channels x (vec * owv) output columns of one output row; the
 * input-channel loop is tiled by ct (first tile stores, later tiles
 * accumulate). Optional weight packing lays the kb weights of one (c, r, s)
 * side by side, zero-padded to a multiple of kb. Loop order 0 keeps a weight
 * block hot (k-block outermost), order 1 keeps input rows hot (row
 * outermost). Edge tiles go through a small buffer; unpacked partial
 * k-blocks fall back to a scalar loop. Both preparation copies are part of
 * the timed operator.
 *
 * Grouped (and depthwise) convolution: the driver runs once per image and
 * group on the group's C/g input and K/g output channels (sub-shape n = 1,
 * c = C/g, k = K/g); the workspace is that of the sub-shape, reused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/kernels.h"
#include "tune/ukernels.h"

#define OW_ALIGN 32

int pb_conv_out_h(const pb_conv_shape *s)
{
	if (s->stride < 1)
		return 0;
	return (s->h + 2 * s->pad - s->r) / s->stride + 1;
}

int pb_conv_out_w(const pb_conv_shape *s)
{
	if (s->stride < 1)
		return 0;
	return (s->w + 2 * s->pad - s->s) / s->stride + 1;
}

int pb_conv_groups(const pb_conv_shape *s)
{
	return s->group > 1 ? s->group : 1;
}

/* The per-group, per-image sub-shape of a grouped convolution. */
static pb_conv_shape group_shape(const pb_conv_shape *s)
{
	pb_conv_shape g = *s;
	int ng = pb_conv_groups(s);
	g.n = ng > 1 ? 1 : s->n;
	g.c = s->c / ng, g.k = s->k / ng, g.group = 1;
	return g;
}

int pb_conv_legal(const pb_conv_cfg *c, char *why, size_t len)
{
	const char *r = NULL;
	char buf[160];
	if (c->vec != 1 && c->vec != 4 && c->vec != 8)
		r = "vector width must be 1, 4 or 8";
	else if (c->kb * c->owv > 16) {
		snprintf(buf, sizeof buf, "register tile %dx%d needs %d accumulators (> 16)", c->kb,
		         c->owv, c->kb * c->owv);
		r = buf;
	} else if (c->ct < 1)
		r = "channel tile must be >= 1";
	else if (c->order < 0 || c->order > 1 || c->pack < 0 || c->pack > 1)
		r = "loop order / packing out of range";
	else if (!pb_conv_ukr_find(c->vec, c->kb, c->owv, c->unroll))
		r = "no micro-kernel for this vector width, register tile and unroll";
	if (r && why)
		snprintf(why, len, "%s", r);
	return r == NULL;
}

static long round_up(long v, long m)
{
	return (v + m - 1) / m * m;
}

static long xbuf_size(const pb_conv_shape *s)
{
	long hp = s->h + 2L * s->pad, owp = round_up(pb_conv_out_w(s), OW_ALIGN);
	return (long)s->c * hp * s->s * owp;
}

size_t pb_conv_workspace(const pb_conv_cfg *c, const pb_conv_shape *shape)
{
	pb_conv_shape g = group_shape(shape);
	const pb_conv_shape *s = &g;
	long wp = round_up(s->k, c->kb) * s->c * s->r * s->s;
	return (size_t)(xbuf_size(s) + wp + (long)c->kb * c->vec * c->owv + 64);
}

typedef struct conv_run {
	const pb_conv_cfg *c;
	const pb_conv_shape *s;
	pb_conv_ukr ukr;
	int oh_n, ow_n;
	long owp, xcs, xrs, xss;
	const float *x, *w, *wp;
	float *out, *tmp;
} conv_run;

/* One register tile: channels k0.., row oh, columns ow0.., inputs c0..c0+nc. */
static void conv_tile(const conv_run *t, int kbk, int oh, int ow0, int c0, int nc)
{
	const pb_conv_cfg *c = t->c;
	const pb_conv_shape *s = t->s;
	const int KB = c->kb, WT = c->vec * c->owv, k0 = kbk * KB, first = c0 == 0;
	const int nk = s->k - k0 < KB ? s->k - k0 : KB;
	const int nw = t->ow_n - ow0 < WT ? t->ow_n - ow0 : WT;
	const long plane = (long)t->oh_n * t->ow_n;
	const float *x = t->x + c0 * t->xcs + (long)oh * s->stride * t->xrs + ow0;
	float *o = t->out + k0 * plane + (long)oh * t->ow_n + ow0;
	const long rs = (long)s->r * s->s;
	if (!c->pack && nk < KB) {
		for (int kk = 0; kk < nk; kk++)
			for (int xw = 0; xw < nw; xw++) {
				float acc = 0.0f;
				for (int ci = 0; ci < nc; ci++)
					for (int r = 0; r < s->r; r++)
						for (int q = 0; q < s->s; q++)
							acc += t->w[((long)(k0 + kk) * s->c + c0 +
							             ci) *
							                rs +
							            r * s->s + q] *
							       x[ci * t->xcs + r * t->xrs +
							         q * t->xss + xw];
				float *op = o + kk * plane + xw;
				*op = first ? acc : *op + acc;
			}
		return;
	}
	const float *w;
	long wks, wcs, wss;
	if (c->pack) {
		w = t->wp + ((long)kbk * s->c + c0) * rs * KB;
		wks = 1, wcs = rs * KB, wss = KB;
	} else {
		w = t->w + ((long)k0 * s->c + c0) * rs;
		wks = (long)s->c * rs, wcs = rs, wss = 1;
	}
	if (nk == KB && nw == WT) {
		t->ukr(nc, s->r, s->s, x, t->xcs, t->xrs, t->xss, w, wks, wcs, wss, o, plane,
		       first);
		return;
	}
	t->ukr(nc, s->r, s->s, x, t->xcs, t->xrs, t->xss, w, wks, wcs, wss, t->tmp, WT, 1);
	for (int kk = 0; kk < nk; kk++)
		for (int xw = 0; xw < nw; xw++) {
			float *op = o + kk * plane + xw;
			*op = first ? t->tmp[kk * WT + xw] : *op + t->tmp[kk * WT + xw];
		}
}

static void prepare_input(const conv_run *t, const float *in)
{
	const pb_conv_shape *s = t->s;
	const long hp = s->h + 2L * s->pad;
	float *x = (float *)t->x;
	for (int c = 0; c < s->c; c++)
		for (long y = 0; y < hp; y++) {
			long iy = y - s->pad;
			for (int q = 0; q < s->s; q++) {
				float *dst = x + c * t->xcs + y * t->xrs + q * t->xss;
				if (iy < 0 || iy >= s->h) {
					memset(dst, 0, (size_t)t->owp * sizeof *dst);
					continue;
				}
				const float *src = in + ((long)c * s->h + iy) * s->w;
				for (long ox = 0; ox < t->owp; ox++) {
					long ix = ox * s->stride + q - s->pad;
					dst[ox] = ix >= 0 && ix < s->w ? src[ix] : 0.0f;
				}
			}
		}
}

static void pack_weights(const conv_run *t)
{
	const pb_conv_shape *s = t->s;
	const int KB = t->c->kb;
	const long rs = (long)s->r * s->s, nkb = (s->k + KB - 1) / KB;
	float *wp = (float *)t->wp;
	for (long b = 0; b < nkb; b++)
		for (int c = 0; c < s->c; c++)
			for (long e = 0; e < rs; e++)
				for (int kk = 0; kk < KB; kk++) {
					long k = b * KB + kk;
					*wp++ = k < s->k ? t->w[(k * s->c + c) * rs + e] : 0.0f;
				}
}

static void conv_run_one(const pb_conv_cfg *c, const pb_conv_shape *s, const float *in,
                         const float *w, float *out, float *ws)
{
	conv_run t = {c, s, pb_conv_ukr_find(c->vec, c->kb, c->owv, c->unroll)};
	t.oh_n = pb_conv_out_h(s);
	t.ow_n = pb_conv_out_w(s);
	t.owp = round_up(t.ow_n, OW_ALIGN);
	t.xss = t.owp;
	t.xrs = s->s * t.owp;
	t.xcs = (s->h + 2L * s->pad) * t.xrs;
	t.x = ws;
	t.wp = ws + xbuf_size(s);
	t.tmp = (float *)t.wp + round_up(s->k, c->kb) * s->c * s->r * s->s;
	t.w = w;
	if (c->pack)
		pack_weights(&t);
	const int WT = c->vec * c->owv, nkb = (s->k + c->kb - 1) / c->kb;
	const int ct = c->ct < s->c ? c->ct : s->c;
	for (int n = 0; n < s->n; n++) {
		prepare_input(&t, in + (long)n * s->c * s->h * s->w);
		t.out = out + (long)n * s->k * t.oh_n * t.ow_n;
		if (c->order == 0) {
			for (int kbk = 0; kbk < nkb; kbk++)
				for (int c0 = 0; c0 < s->c; c0 += ct) {
					int nc = s->c - c0 < ct ? s->c - c0 : ct;
					for (int oh = 0; oh < t.oh_n; oh++)
						for (int ow0 = 0; ow0 < t.ow_n; ow0 += WT)
							conv_tile(&t, kbk, oh, ow0, c0, nc);
				}
		} else {
			for (int c0 = 0; c0 < s->c; c0 += ct) {
				int nc = s->c - c0 < ct ? s->c - c0 : ct;
				for (int oh = 0; oh < t.oh_n; oh++)
					for (int kbk = 0; kbk < nkb; kbk++)
						for (int ow0 = 0; ow0 < t.ow_n; ow0 += WT)
							conv_tile(&t, kbk, oh, ow0, c0, nc);
			}
		}
	}
}

int pb_conv_run(const pb_conv_cfg *c, const pb_conv_shape *s, const float *in, const float *w,
                float *out, float *ws)
{
	const int ng = pb_conv_groups(s);
	if (!pb_conv_legal(c, NULL, 0) || pb_conv_out_h(s) < 1 || pb_conv_out_w(s) < 1 ||
	    s->c % ng || s->k % ng)
		return -1;
	if (ng == 1) {
		conv_run_one(c, s, in, w, out, ws);
		return 0;
	}
	const pb_conv_shape g = group_shape(s);
	const long in_g = (long)g.c * s->h * s->w, w_g = (long)g.k * g.c * s->r * s->s;
	const long out_g = (long)g.k * pb_conv_out_h(s) * pb_conv_out_w(s);
	for (int n = 0; n < s->n; n++)
		for (int gi = 0; gi < ng; gi++)
			conv_run_one(c, &g, in + ((long)n * ng + gi) * in_g, w + gi * w_g,
			             out + ((long)n * ng + gi) * out_g, ws);
	return 0;
}

void pb_conv_ref(const pb_conv_shape *s, const float *in, const float *w, float *out)
{
	const int OH = pb_conv_out_h(s), OW = pb_conv_out_w(s);
	const int cg = s->c / pb_conv_groups(s), kg = s->k / pb_conv_groups(s);
	const long plane = (long)OH * OW;
	double *acc = malloc((size_t)(plane > 0 ? plane : 1) * sizeof *acc);
	for (int n = 0; n < s->n; n++)
		for (int k = 0; k < s->k; k++) {
			float *o = out + ((long)n * s->k + k) * plane;
			for (long p = 0; p < plane; p++)
				if (acc)
					acc[p] = 0;
				else
					o[p] = 0;
			for (int c = 0; c < cg; c++)
				for (int r = 0; r < s->r; r++)
					for (int q = 0; q < s->s; q++) {
						/* output channel k reads the cg input
						 * channels of its group k / kg */
						double wv =
						    w[(((long)k * cg + c) * s->r + r) * s->s + q];
						const float *src = in + ((long)n * s->c +
						                         (long)(k / kg) * cg + c) *
						                            s->h * s->w;
						for (int oh = 0; oh < OH; oh++) {
							int iy = oh * s->stride + r - s->pad;
							if (iy < 0 || iy >= s->h)
								continue;
							for (int ow = 0; ow < OW; ow++) {
								int ix =
								    ow * s->stride + q - s->pad;
								if (ix < 0 || ix >= s->w)
									continue;
								double v =
								    wv * src[(long)iy * s->w + ix];
								if (acc)
									acc[(long)oh * OW + ow] +=
									    v;
								else
									o[(long)oh * OW + ow] +=
									    (float)v;
							}
						}
					}
			if (acc)
				for (long p = 0; p < plane; p++)
					o[p] = (float)acc[p];
		}
	free(acc);
}
