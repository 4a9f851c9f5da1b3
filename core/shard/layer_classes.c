/*
 * shard/layer_classes.c — runs of identical blocks in the node order
 * (layer_classes.h).
 *
 * 1. Every node gets a signature: a 64-bit hash of its operator, domain,
 *    attributes and, per input and output, rank, dims, type and whether it
 *    is an initializer. Two nodes of equal signature are interchangeable
 *    locally.
 * 2. For every period P, runs of positions i with sig[i] == sig[i + P] of
 *    length >= P mark k = 1 + floor(length / P) consecutive equal blocks;
 *    the run covering the most nodes ((k - 1) P) wins, the smallest P on a
 *    tie (a block of two identical halves is one block). O(n^2 / 2)
 *    signature comparisons: 4 M for a 96-layer GPT.
 * 3. The wiring check of the header keeps the blocks up to the first one
 *    that is wired differently.
 * 4. Repeat on the nodes outside the runs found.
 * The sequence holds the nodes that are not constants
 * (pb_graph_constant_nodes: weight copies, shape arithmetic), in node order;
 * an input from a constant node is compared like an initializer.
 */
#include "shard/layer_classes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/job.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = mix(h, (unsigned char)*s);
	return mix(h, 0xfe);
}

static uint64_t mix_tensor(uint64_t h, const pb_tensor *t)
{
	h = mix(h, (uint64_t)(int64_t)t->dtype);
	h = mix(h, (uint64_t)(int64_t)t->rank);
	for (int k = 0; k < t->rank && k < PB_MAX_RANK; k++)
		h = mix(h, (uint64_t)t->dims[k]);
	h = mix(h, t->is_initializer);
	if (t->value) /* small constants (shapes, scales) must agree */
		for (int64_t k = 0; k < t->value->numel && k < 64; k++)
			h = mix(h, (uint64_t)t->value->i[k] ^ (uint64_t)(t->value->f[k] * 1e6));
	return h;
}

static uint64_t signature(const pb_graph *g, const pb_node *n)
{
	uint64_t h = mix_str(mix_str(1469598103934665603ULL, n->op), n->domain);
	for (int a = 0; a < n->n_attrs; a++) {
		const pb_attr *at = &n->attrs[a];
		h = mix(mix_str(h, at->name), (uint64_t)at->type);
		h = mix(h, (uint64_t)at->i);
		h = mix(h, (uint64_t)(at->f * 1e9));
		h = mix_str(h, at->s);
		for (int k = 0; k < at->n; k++) {
			if (at->ints)
				h = mix(h, (uint64_t)at->ints[k]);
			if (at->floats)
				h = mix(h, (uint64_t)(at->floats[k] * 1e9));
			if (at->strings)
				h = mix_str(h, at->strings[k]);
		}
	}
	h = mix(h, (uint64_t)n->n_inputs);
	for (int i = 0; i < n->n_inputs; i++)
		h = n->inputs[i] < 0 ? mix(h, 0xabcd) : mix_tensor(h, &g->tensors[n->inputs[i]]);
	h = mix(h, (uint64_t)n->n_outputs);
	for (int i = 0; i < n->n_outputs; i++)
		h = mix_tensor(h, &g->tensors[n->outputs[i]]);
	return h;
}

/* Checks block j (>= 1) of the run against block 0 (positions in seq; pos is
 * the inverse, -1 for constant nodes); glue[o * slots + i] records the
 * previous-block offset of a glue input (-2: not set yet). */
static int block_matches(const pb_graph *g, const int *seq, const int *pos, int start, int P, int j,
                         int *glue, int slots)
{
	int b0 = start, bj = start + j * P;
	for (int o = 0; o < P; o++) {
		const pb_node *u = &g->nodes[seq[b0 + o]], *v = &g->nodes[seq[bj + o]];
		if (u->n_inputs != v->n_inputs || u->n_inputs > slots)
			return 0;
		for (int i = 0; i < v->n_inputs; i++) {
			int tu = u->inputs[i], tv = v->inputs[i];
			if ((tu < 0) != (tv < 0))
				return 0;
			if (tu < 0)
				continue;
			int ru = g->tensors[tu].producer, rv = g->tensors[tv].producer;
			int pu = ru < 0 ? -1 : pos[ru], pv = rv < 0 ? -1 : pos[rv];
			if (pv < 0 || pu < 0) { /* initializer, constant or model input */
				if ((pu < 0) != (pv < 0) || (g->tensors[tu].is_input && tu != tv))
					return 0;
				continue;
			}
			if (pv >= bj && pv < bj + P) { /* inside the block */
				if (pu != pv - j * P)
					return 0;
			} else if (pv >= bj - P && pv < bj) { /* from the previous block */
				if (pu >= start)
					return 0; /* block 0 must take it from before the run */
				int *gl = &glue[o * slots + i];
				if (*gl == -2)
					*gl = pv - (bj - P);
				else if (*gl != pv - (bj - P))
					return 0;
			} else if (pv != pu || (pv >= start && pv < bj)) {
				return 0; /* elsewhere: must be the very same node, outside */
			}
		}
	}
	return 1;
}

/* The best run among nodes [lo, hi) not yet taken. */
static void best_run(const uint64_t *sig, const unsigned char *taken, int lo, int hi,
                     pb_layer_run *best)
{
	best->count = 0;
	long cover = 0;
	int n = hi - lo;
	for (int P = 1; P <= n / 2; P++) {
		if (P % 64 == 0)
			pb_job_tick(); /* run as a workbench job: the screen stays live */
		int len = 0;
		for (int i = lo; i + P < hi; i++) {
			if (sig[i] == sig[i + P] && !taken[i] && !taken[i + P]) {
				len++;
				continue;
			}
			if (len >= P) {
				int k = 1 + len / P;
				if ((long)(k - 1) * P > cover) {
					cover = (long)(k - 1) * P;
					best->start = i - len;
					best->period = P;
					best->count = k;
				}
			}
			len = 0;
		}
		if (len >= P) {
			int k = 1 + len / P;
			if ((long)(k - 1) * P > cover) {
				cover = (long)(k - 1) * P;
				best->start = hi - P - len;
				best->period = P;
				best->count = k;
			}
		}
	}
}

int pb_layer_classes_find(const pb_graph *g, pb_layer_classes *lc, pb_error *err)
{
	memset(lc, 0, sizeof *lc);
	int n = g->n_nodes, m = 0;
	lc->n_nodes = n;
	lc->rep = malloc((size_t)(n + 1) * sizeof *lc->rep);
	lc->block = malloc((size_t)(n + 1) * sizeof *lc->block);
	lc->block_end = calloc((size_t)n + 1, 1);
	uint64_t *sig = malloc((size_t)(n + 1) * sizeof *sig);
	unsigned char *taken = calloc((size_t)n + 1, 1);
	int *seq = malloc((size_t)(n + 1) * sizeof *seq);
	int *pos = malloc((size_t)(n + 1) * sizeof *pos);
	unsigned char *cst = pb_graph_constant_nodes(g);
	lc->runs = calloc(16, sizeof *lc->runs);
	int slots = 0;
	for (int i = 0; i < n; i++)
		if (g->nodes[i].n_inputs > slots)
			slots = g->nodes[i].n_inputs;
	int *glue = NULL;
	int rc = PB_OK;
	if (!lc->rep || !lc->block || !lc->block_end || !sig || !taken || !seq || !pos || !cst ||
	    !lc->runs) {
		rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
		goto out;
	}
	/* the sequence: nodes that compute on activations (weight copies and
	 * shape arithmetic are constants, wherever the exporter put them) */
	for (int i = 0; i < n; i++) {
		lc->rep[i] = i;
		lc->block[i] = -1;
		pos[i] = -1;
		if (!cst[i]) {
			pos[i] = m;
			seq[m] = i;
			sig[m++] = signature(g, &g->nodes[i]);
		}
	}
	while (lc->n_runs < 16) {
		pb_layer_run r;
		best_run(sig, taken, 0, m, &r);
		if (r.count < 2)
			break;
		free(glue);
		glue = malloc((size_t)r.period * (size_t)(slots + 1) * sizeof *glue);
		if (!glue) {
			rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
			break;
		}
		for (long k = 0; k < (long)r.period * (slots + 1); k++)
			glue[k] = -2;
		int k = 1;
		while (k < r.count &&
		       block_matches(g, seq, pos, r.start, r.period, k, glue, slots + 1))
			k++;
		/* the blocks found are taken either way, so the search moves on */
		for (int i = r.start; i < r.start + r.count * r.period; i++)
			taken[i] = 1;
		if (k < 2)
			continue;
		r.count = k;
		/* the first and the last block meet the prefix and the suffix: each is
		 * its own class; the middle blocks are one class, block 1 its
		 * representative */
		for (int j = 2; j < k - 1; j++)
			for (int o = 0; o < r.period; o++)
				lc->rep[seq[r.start + j * r.period + o]] =
				    seq[r.start + r.period + o];
		for (int j = 0; j < k; j++) {
			for (int o = 0; o < r.period; o++)
				lc->block[seq[r.start + j * r.period + o]] = j;
			lc->block_end[seq[r.start + (j + 1) * r.period - 1]] = 1;
		}
		r.start = seq[r.start];
		lc->runs[lc->n_runs++] = r;
	}
	/* runs in node order */
	for (int a = 1; a < lc->n_runs; a++)
		for (int b = a; b > 0 && lc->runs[b].start < lc->runs[b - 1].start; b--) {
			pb_layer_run t = lc->runs[b];
			lc->runs[b] = lc->runs[b - 1];
			lc->runs[b - 1] = t;
		}
out:
	free(glue);
	free(sig);
	free(taken);
	free(seq);
	free(pos);
	free(cst);
	if (rc)
		pb_layer_classes_free(lc);
	return rc;
}

void pb_layer_classes_free(pb_layer_classes *lc)
{
	free(lc->runs);
	free(lc->rep);
	free(lc->block);
	free(lc->block_end);
	memset(lc, 0, sizeof *lc);
}
