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
 * 4. Repeat on the nodes outside the runs found. A period's best cover at
 *    one search bounds it at the next (taking nodes only shortens runs), so
 *    a repeat tries only the periods whose bound can still win (best_run).
 * The sequence holds the nodes that are not constants
 * (pb_graph_constant_nodes: weight copies, shape arithmetic), in node order;
 * an input from a constant node is compared like an initializer.
 */
#include "shard/layer_classes.h"

#include <limits.h>
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

/* The run of period P covering the most nodes among [lo, hi) not yet taken
 * (the first such in node order: *start); returns its cover, 0 for none. */
static long period_run(const uint64_t *sig, const unsigned char *taken, int lo, int hi, int P,
                       int *start)
{
	long best = 0;
	int len = 0;
	for (int i = lo; i + P < hi; i++) {
		if (sig[i] == sig[i + P] && !taken[i] && !taken[i + P]) {
			len++;
			continue;
		}
		if (len >= P && (long)(len / P) * P > best) {
			best = (long)(len / P) * P;
			*start = i - len;
		}
		len = 0;
	}
	if (len >= P && (long)(len / P) * P > best) {
		best = (long)(len / P) * P;
		*start = hi - P - len;
	}
	return best;
}

/* The best run among nodes [lo, hi) not yet taken: the most nodes covered
 * ((k - 1) P for k blocks), the smallest period on a tie. ub[P] is the
 * cover period P had at the previous search, LONG_MAX before the first:
 * taking nodes only shortens runs, so it bounds this one's, and the periods
 * are tried from the largest bound down until no bound can beat the best
 * found. order holds the periods 1 .. (hi - lo) / 2 in the previous
 * search's order (ascending before the first). The answer is that of trying
 * every period; after the first, a search costs little (swin_t: 46
 * searches over 3,748 nodes, 1,921 periods tried instead of 86,204: 0.16 s
 * -> 0.006 s CPU). tried counts the periods scanned. */
static void best_run(const uint64_t *sig, const unsigned char *taken, int lo, int hi, long *ub,
                     int *order, long *tried, pb_layer_run *best)
{
	best->count = 0;
	long cover = 0;
	int np = (hi - lo) / 2;
	/* largest bound first, then the smallest period (insertion: the order of
	 * the previous search, where only the periods tried moved, is nearly
	 * sorted already) */
	for (int a = 1; a < np; a++)
		for (int b = a; b > 0; b--) {
			int x = order[b], y = order[b - 1];
			long ux = ub[x], uy = ub[y];
			if (ux < uy || (ux == uy && x > y))
				break;
			order[b] = y;
			order[b - 1] = x;
		}
	for (int t = 0; t < np; t++) {
		int P = order[t];
		if (ub[P] < cover || (ub[P] == cover && (cover == 0 || P > best->period)))
			break; /* the rest are sorted below it */
		if (t % 64 == 63)
			pb_job_tick(); /* run as a workbench job: the screen stays live */
		int start = 0;
		long c = period_run(sig, taken, lo, hi, P, &start);
		++*tried;
		ub[P] = c;
		if (c > cover || (c == cover && c > 0 && P < best->period)) {
			cover = c;
			best->start = start;
			best->period = P;
			best->count = (int)(1 + c / P);
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
	long *ub = malloc((size_t)(n + 1) * sizeof *ub);
	int *order = malloc((size_t)(n + 1) * sizeof *order);
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
	if (!lc->rep || !lc->block || !lc->block_end || !sig || !ub || !order || !taken || !seq ||
	    !pos || !cst || !lc->runs) {
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
	lc->periods = m / 2;
	for (int P = 0; P <= m; P++) {
		ub[P] = LONG_MAX;
		order[P] = P + 1;
	}
	while (lc->n_runs < 16) {
		pb_layer_run r;
		best_run(sig, taken, 0, m, ub, order, &lc->tried, &r);
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
	free(ub);
	free(order);
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
