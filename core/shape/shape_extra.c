/*
 * shape_extra.c — shape rules for the less common operator families:
 * recurrent layers (RNN, GRU, LSTM), losses, sampling (GridSample, RoiAlign,
 * MaxUnpool), random generators, signal processing (DFT, STFT, windows,
 * MelWeightMatrix), training optimisers (Adagrad, Adam, Momentum),
 * DynamicQuantizeLinear and TfIdfVectorizer, and the data-dependent Unique
 * and NonMaxSuppression, whose output sizes are computed when the input
 * values are known (small constant tensors), else left unknown.
 *
 * Same contract as shape_ops.c: follow the ONNX specification, leave
 * unknown what cannot be determined, never fail hard.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape_rules.h"

static int has_shape(const pb_tensor *t)
{
	return t && t->rank >= 0;
}

static int64_t scalar_value(const pb_sx *c, int i)
{
	const pb_value *v = pb_sx_val(c, i);
	return (v && v->numel >= 1) ? pb_sx_clamp(v->i[0]) : -1;
}

/* RNN / GRU / LSTM. X: [seq, batch, input] (layout 0) or [batch, seq,
 * input] (layout 1). Y: [seq, dirs, batch, hidden] or [batch, seq, dirs,
 * hidden]; Y_h (and LSTM's Y_c): [dirs, batch, hidden] or [batch, dirs,
 * hidden]. hidden_size comes from the attribute, else from R [dirs, G*h, h]. */
static int rule_recurrent(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *r = pb_sx_in(c, 2);
	if (!has_shape(x) || x->rank != 3)
		return 0;
	int layout = (int)pb_node_attr_int(c->n, "layout", 0);
	const char *dir = pb_node_attr_str(c->n, "direction", "forward");
	int64_t dirs = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
	int64_t h = pb_sx_clamp(pb_node_attr_int(c->n, "hidden_size", -1));
	if (h < 0 && has_shape(r) && r->rank == 3)
		h = r->dims[2];
	int64_t seq = x->dims[layout ? 1 : 0], batch = x->dims[layout ? 0 : 1];
	int64_t y[4], yh[3];
	if (layout) {
		int64_t a[4] = {batch, seq, dirs, h}, b[3] = {batch, dirs, h};
		memcpy(y, a, sizeof y);
		memcpy(yh, b, sizeof yh);
	} else {
		int64_t a[4] = {seq, dirs, batch, h}, b[3] = {dirs, batch, h};
		memcpy(y, a, sizeof y);
		memcpy(yh, b, sizeof yh);
	}
	pb_sx_set(pb_sx_out(c, 0), x->dtype, 4, y);
	pb_sx_set(pb_sx_out(c, 1), x->dtype, 3, yh);
	pb_sx_set(pb_sx_out(c, 2), x->dtype, 3, yh);
	return 1;
}

/* NegativeLogLikelihoodLoss(input [N, C, d...], target [N, d...]) and
 * SoftmaxCrossEntropyLoss(scores, labels): reduction "none" keeps the
 * target's shape, "mean"/"sum" give a scalar; SCE's optional second output
 * (log_prob) has the scores' shape. */
static int rule_loss(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *t = pb_sx_in(c, 1);
	const char *red = pb_node_attr_str(c->n, "reduction", "mean");
	int dt = x ? x->dtype : 0;
	if (strcmp(red, "none") == 0) {
		if (!has_shape(t))
			return 0;
		pb_sx_set(pb_sx_out(c, 0), dt, t->rank, t->dims);
	} else {
		pb_sx_set(pb_sx_out(c, 0), dt, 0, NULL);
	}
	if (has_shape(x))
		pb_sx_same(pb_sx_out(c, 1), x);
	return 1;
}

/* GridSample: X [N, C, D1..Dr], grid [N, H1..Hr, r] → [N, C, H1..Hr]. */
static int rule_grid_sample(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *g = pb_sx_in(c, 1);
	if (!has_shape(x) || !has_shape(g) || g->rank < 2 || g->rank > PB_MAX_RANK - 1)
		return 0;
	int64_t d[PB_MAX_RANK];
	d[0] = x->dims[0] >= 0 ? x->dims[0] : g->dims[0];
	d[1] = x->rank >= 2 ? x->dims[1] : -1;
	for (int i = 1; i < g->rank - 1; i++)
		d[i + 1] = g->dims[i];
	pb_sx_set(pb_sx_out(c, 0), x->dtype, g->rank, d);
	return 1;
}

/* RoiAlign: X [N, C, H, W], rois [R, 4] → [R, C, output_height, output_width]. */
static int rule_roi_align(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *rois = pb_sx_in(c, 1);
	if (!has_shape(x) || x->rank != 4)
		return 0;
	int64_t d[4] = {has_shape(rois) && rois->rank == 2 ? rois->dims[0] : -1, x->dims[1],
	                pb_sx_clamp(pb_node_attr_int(c->n, "output_height", 1)),
	                pb_sx_clamp(pb_node_attr_int(c->n, "output_width", 1))};
	pb_sx_set(pb_sx_out(c, 0), x->dtype, 4, d);
	return 1;
}

/* MaxUnpool: output_shape input when given, else
 * (in - 1) * stride + kernel - pad_begin - pad_end per spatial axis. */
static int rule_max_unpool(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	if (!has_shape(x) || x->rank < 3)
		return 0;
	int64_t shp[PB_MAX_RANK];
	int n = 0;
	if (pb_sx_in(c, 2)) {
		if (pb_sx_dims_arg(c, 2, NULL, "output_shape", shp, PB_MAX_RANK, &n) != 1 ||
		    n != x->rank) {
			pb_sx_set(pb_sx_out(c, 0), x->dtype, x->rank, NULL);
			return 1;
		}
		pb_sx_set(pb_sx_out(c, 0), x->dtype, n, shp);
		return 1;
	}
	int ns = x->rank - 2;
	const pb_attr *ks = pb_node_attr(c->n, "kernel_shape"), *st = pb_node_attr(c->n, "strides"),
	              *pd = pb_node_attr(c->n, "pads");
	if (!ks || !ks->ints || ks->n != ns)
		return 0;
	for (int i = 0; i < ns; i++)
		if (ks->ints[i] < 1 || (st && st->ints && i < st->n && st->ints[i] < 1))
			return pb_sx_conflict(
			    c, "kernel_shape and strides must be at least 1 (axis %d)", i);
	int64_t d[PB_MAX_RANK] = {x->dims[0], x->dims[1]};
	for (int i = 0; i < ns; i++) {
		int64_t k = pb_sx_clamp(ks->ints[i]);
		int64_t s = (st && st->ints && i < st->n) ? pb_sx_clamp(st->ints[i]) : 1;
		int64_t pb = (pd && pd->ints && i < pd->n) ? pb_sx_clamp(pd->ints[i]) : 0;
		int64_t pe = (pd && pd->ints && i + ns < pd->n) ? pb_sx_clamp(pd->ints[i + ns]) : 0;
		int64_t in = x->dims[2 + i];
		int64_t grown = pb_sx_mul(in > 0 ? in - 1 : -1, s < 0 ? -1 : s);
		d[2 + i] = grown < 0 ? -1 : grown + k - pb - pe;
	}
	pb_sx_set(pb_sx_out(c, 0), x->dtype, x->rank, d);
	return 1;
}

/* Bernoulli, Random*Like: the input's shape; dtype attribute or the input's. */
static int rule_random_like(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	if (!has_shape(x))
		return 0;
	int64_t dt = pb_node_attr_int(c->n, "dtype", 0);
	pb_sx_set(pb_sx_out(c, 0), dt ? (int)dt : x->dtype, x->rank, x->dims);
	return 1;
}

/* RandomNormal / RandomUniform: shape attribute, dtype default float. */
static int rule_random(pb_sx *c)
{
	int64_t shp[PB_MAX_RANK];
	int n = 0;
	if (pb_sx_dims_arg(c, 99, "shape", "shape", shp, PB_MAX_RANK, &n) != 1)
		return 0;
	for (int i = 0; i < n; i++)
		if (shp[i] < 0)
			return pb_sx_conflict(c, "shape[%d] = %lld is negative", i,
			                      (long long)shp[i]);
	pb_sx_set(pb_sx_out(c, 0), (int)pb_node_attr_int(c->n, "dtype", PB_DT_FLOAT), n, shp);
	return 1;
}

static int rule_dynamic_quantize(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	if (!has_shape(x))
		return 0;
	pb_sx_set(pb_sx_out(c, 0), PB_DT_UINT8, x->rank, x->dims);
	pb_sx_set(pb_sx_out(c, 1), PB_DT_FLOAT, 0, NULL);
	pb_sx_set(pb_sx_out(c, 2), PB_DT_UINT8, 0, NULL);
	return 1;
}

/* HannWindow / HammingWindow / BlackmanWindow: [size]. */
static int rule_window(pb_sx *c)
{
	int64_t n = scalar_value(c, 0);
	int dt = (int)pb_node_attr_int(c->n, "output_datatype", PB_DT_FLOAT);
	pb_sx_set(pb_sx_out(c, 0), dt, 1, &n);
	return 1;
}

/* MelWeightMatrix(num_mel_bins, dft_length, ...) → [dft_length/2 + 1, num_mel_bins]. */
static int rule_mel(pb_sx *c)
{
	int64_t bins = scalar_value(c, 0), len = scalar_value(c, 1);
	int64_t d[2] = {len >= 0 ? len / 2 + 1 : -1, bins};
	pb_sx_set(pb_sx_out(c, 0), (int)pb_node_attr_int(c->n, "output_datatype", PB_DT_FLOAT), 2,
	          d);
	return 1;
}

/* DFT (opset 17): input [..., 1 or 2]; the transformed axis (attribute, default 1)
 * gets dft_length (input, default its size), halved + 1 when onesided; the last
 * dim becomes 2 (complex). */
static int rule_dft(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	if (!has_shape(x) || x->rank < 2)
		return 0;
	int a = pb_sx_axis(pb_node_attr_int(c->n, "axis", 1), x->rank);
	if (a < 0 || a == x->rank - 1)
		return 0;
	int64_t d[PB_MAX_RANK];
	memcpy(d, x->dims, sizeof d);
	int64_t len = pb_sx_in(c, 1) ? scalar_value(c, 1) : x->dims[a];
	if (pb_node_attr_int(c->n, "onesided", 0))
		len = len >= 0 ? len / 2 + 1 : -1;
	d[a] = len;
	d[x->rank - 1] = 2;
	pb_sx_set(pb_sx_out(c, 0), x->dtype, x->rank, d);
	return 1;
}

/* STFT(signal [B, L, 1|2], frame_step, window, frame_length) →
 * [B, frames, bins, 2]; frames = (L - frame_length) / frame_step + 1,
 * bins = frame_length / 2 + 1 when onesided (default). */
static int rule_stft(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *w = pb_sx_in(c, 2);
	if (!has_shape(x) || x->rank != 3)
		return 0;
	int64_t step = scalar_value(c, 1);
	int64_t flen =
	    pb_sx_in(c, 3) ? scalar_value(c, 3) : (has_shape(w) && w->rank == 1 ? w->dims[0] : -1);
	int64_t frames =
	    (step > 0 && flen >= 0 && x->dims[1] >= flen) ? (x->dims[1] - flen) / step + 1 : -1;
	int64_t bins =
	    flen < 0 ? -1 : (pb_node_attr_int(c->n, "onesided", 1) ? flen / 2 + 1 : flen);
	int64_t d[4] = {x->dims[0], frames, bins, 2};
	pb_sx_set(pb_sx_out(c, 0), x->dtype, 4, d);
	return 1;
}

/* Adagrad (R, T, X.., G.., H..), Momentum (R, T, X.., G.., V..), Adam
 * (R, T, X.., G.., V.., H..): output k has the shape of X_(k mod n). */
static int rule_optimizer(pb_sx *c)
{
	int groups = strcmp(c->n->op, "Adam") == 0 ? 4 : 3;
	int n = (c->n->n_inputs - 2) / groups;
	if (n <= 0)
		return 0;
	for (int k = 0; k < c->n->n_outputs; k++) {
		pb_tensor *x = pb_sx_in(c, 2 + k % n);
		if (has_shape(x))
			pb_sx_same(pb_sx_out(c, k), x);
	}
	return 1;
}

/* TfIdfVectorizer: [C] → [max(ngram_indexes) + 1], [N, C] → [N, that]. */
static int rule_tfidf(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	const pb_attr *ix = pb_node_attr(c->n, "ngram_indexes");
	if (!has_shape(x) || x->rank < 1 || x->rank > 2 || !ix || !ix->ints)
		return 0;
	int64_t m = -1;
	for (int i = 0; i < ix->n; i++)
		m = ix->ints[i] > m ? pb_sx_clamp(ix->ints[i]) : m;
	int64_t d[2] = {x->dims[0], m + 1};
	if (x->rank == 1)
		pb_sx_set(pb_sx_out(c, 0), PB_DT_FLOAT, 1, &d[1]);
	else
		pb_sx_set(pb_sx_out(c, 0), PB_DT_FLOAT, 2, d);
	return 1;
}

/* Unique: the number of distinct elements (or of distinct slices along
 * `axis`), counted by sorting slice indices. */
typedef struct {
	const double *f;
	int64_t outer, n, inner;
} slices;

static int cmp_slice(const void *a, const void *b, void *ud)
{
	const slices *s = ud;
	int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
	for (int64_t o = 0; o < s->outer; o++)
		for (int64_t k = 0; k < s->inner; k++) {
			double x = s->f[(o * s->n + i) * s->inner + k];
			double y = s->f[(o * s->n + j) * s->inner + k];
			if (x != y)
				return x < y ? -1 : 1;
		}
	return 0;
}

static int rule_unique(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	const pb_value *v = pb_sx_val(c, 0);
	const pb_attr *ax = pb_node_attr(c->n, "axis");
	if (!has_shape(x))
		return 0;
	int axis = ax ? pb_sx_axis(ax->i, x->rank) : -1;
	if (ax && axis < 0)
		return 0;
	int64_t u = -1, n = ax ? x->dims[axis] : pb_tensor_numel(x);
	if (v) {
		slices s = {v->f, ax ? pb_sx_prod(v->dims, 0, axis) : 1,
		            ax ? v->dims[axis] : v->numel,
		            ax ? pb_sx_prod(v->dims, axis + 1, v->rank) : 1};
		int64_t *idx = malloc((size_t)(s.n ? s.n : 1) * sizeof *idx);
		if (idx && s.outer >= 0 && s.inner >= 0) {
			for (int64_t i = 0; i < s.n; i++)
				idx[i] = i;
			qsort_r(idx, (size_t)s.n, sizeof *idx, cmp_slice, &s);
			u = s.n ? 1 : 0;
			for (int64_t i = 1; i < s.n; i++)
				u += cmp_slice(&idx[i - 1], &idx[i], &s) != 0;
		}
		free(idx);
	}
	if (ax) {
		int64_t d[PB_MAX_RANK];
		memcpy(d, x->dims, sizeof d);
		d[axis] = u;
		pb_sx_set(pb_sx_out(c, 0), x->dtype, x->rank, d);
	} else {
		pb_sx_set(pb_sx_out(c, 0), x->dtype, 1, &u);
	}
	pb_sx_set(pb_sx_out(c, 1), PB_DT_INT64, 1, &u);
	pb_sx_set(pb_sx_out(c, 2), PB_DT_INT64, 1, &n);
	pb_sx_set(pb_sx_out(c, 3), PB_DT_INT64, 1, &u);
	return 1;
}

/* NonMaxSuppression → [selected, 3]: per batch and class, boxes with score >
 * score_threshold in descending score order, each kept unless its IoU with
 * an already kept box exceeds iou_threshold, at most
 * max_output_boxes_per_class (0 = none). */
static void box_corners(const double *b, int center, double *y1, double *x1, double *y2, double *x2)
{
	if (center) {
		*x1 = b[0] - b[2] / 2;
		*x2 = b[0] + b[2] / 2;
		*y1 = b[1] - b[3] / 2;
		*y2 = b[1] + b[3] / 2;
	} else {
		*y1 = fmin(b[0], b[2]);
		*y2 = fmax(b[0], b[2]);
		*x1 = fmin(b[1], b[3]);
		*x2 = fmax(b[1], b[3]);
	}
}

static double box_iou(const double *a, const double *b, int center)
{
	double ay1, ax1, ay2, ax2, by1, bx1, by2, bx2;
	box_corners(a, center, &ay1, &ax1, &ay2, &ax2);
	box_corners(b, center, &by1, &bx1, &by2, &bx2);
	double iw = fmin(ax2, bx2) - fmax(ax1, bx1), ih = fmin(ay2, by2) - fmax(ay1, by1);
	if (iw <= 0 || ih <= 0)
		return 0;
	double inter = iw * ih, uni = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter;
	return uni > 0 ? inter / uni : 0;
}

static int cmp_score_desc(const void *a, const void *b, void *ud)
{
	const double *s = ud;
	int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
	if (s[i] != s[j])
		return s[i] > s[j] ? -1 : 1;
	return (i > j) - (i < j); /* stable: lower index first */
}

static int rule_nms(pb_sx *c)
{
	const pb_value *boxes = pb_sx_val(c, 0), *scores = pb_sx_val(c, 1);
	int64_t d[2] = {-1, 3};
	pb_tensor *o = pb_sx_out(c, 0);
	if (!boxes || !scores || boxes->rank != 3 || scores->rank != 3 || boxes->dims[2] != 4 ||
	    scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1]) {
		pb_sx_set(o, PB_DT_INT64, 2, d);
		return 1;
	}
	const pb_value *mo = pb_sx_val(c, 2), *it = pb_sx_val(c, 3), *st = pb_sx_val(c, 4);
	if ((pb_sx_in(c, 2) && !mo) || (pb_sx_in(c, 3) && !it) || (pb_sx_in(c, 4) && !st)) {
		pb_sx_set(o, PB_DT_INT64, 2, d);
		return 1;
	}
	int64_t max_out = mo && mo->numel ? mo->i[0] : 0;
	double iou_thr = it && it->numel ? it->f[0] : 0;
	int has_st = st && st->numel;
	double score_thr = has_st ? st->f[0] : 0;
	int center = (int)pb_node_attr_int(c->n, "center_point_box", 0);
	int64_t nb = boxes->dims[0], nc = scores->dims[1], n = boxes->dims[1], total = 0;
	int64_t *order = malloc((size_t)(n ? n : 1) * sizeof *order);
	int64_t *kept = malloc((size_t)(n ? n : 1) * sizeof *kept);
	for (int64_t b = 0; order && kept && b < nb; b++)
		for (int64_t k = 0; k < nc; k++) {
			const double *s = scores->f + (b * nc + k) * n;
			int64_t m = 0, nk = 0;
			for (int64_t i = 0; i < n; i++)
				if (!has_st || s[i] > score_thr)
					order[m++] = i;
			qsort_r(order, (size_t)m, sizeof *order, cmp_score_desc, (void *)s);
			for (int64_t i = 0; i < m && nk < max_out; i++) {
				const double *bi = boxes->f + (b * n + order[i]) * 4;
				int keep = 1;
				for (int64_t j = 0; j < nk && keep; j++)
					if (box_iou(bi, boxes->f + (b * n + kept[j]) * 4, center) >
					    iou_thr)
						keep = 0;
				if (keep)
					kept[nk++] = order[i];
			}
			total += nk;
		}
	if (order && kept)
		d[0] = total;
	free(order);
	free(kept);
	pb_sx_set(o, PB_DT_INT64, 2, d);
	return 1;
}

const pb_shape_rule_entry pb_shape_rules_extra[] = {
    {"Unique", rule_unique},
    {"NonMaxSuppression", rule_nms},
    {"RNN", rule_recurrent},
    {"GRU", rule_recurrent},
    {"LSTM", rule_recurrent},
    {"NegativeLogLikelihoodLoss", rule_loss},
    {"SoftmaxCrossEntropyLoss", rule_loss},
    {"GridSample", rule_grid_sample},
    {"RoiAlign", rule_roi_align},
    {"MaxUnpool", rule_max_unpool},
    {"Bernoulli", rule_random_like},
    {"RandomUniformLike", rule_random_like},
    {"RandomNormalLike", rule_random_like},
    {"RandomNormal", rule_random},
    {"RandomUniform", rule_random},
    {"DynamicQuantizeLinear", rule_dynamic_quantize},
    {"HannWindow", rule_window},
    {"HammingWindow", rule_window},
    {"BlackmanWindow", rule_window},
    {"MelWeightMatrix", rule_mel},
    {"DFT", rule_dft},
    {"STFT", rule_stft},
    {"Adagrad", rule_optimizer},
    {"Adam", rule_optimizer},
    {"Momentum", rule_optimizer},
    {"TfIdfVectorizer", rule_tfidf},
    {NULL, NULL}};
