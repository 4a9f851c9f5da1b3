/*
 * fuse_xla.c — the conservative XLA-style horizontal-fusion baseline (fuse.h).
 *
 * Rule: fuse only producers whose single consumer is the same node (the
 * siblings that feed one node and nothing else, not graph outputs). Such
 * siblings are independent by construction (each one's only path leads
 * into the shared consumer), so no cycle check is needed. Each set is cut
 * into combinations with the same greedy rule and cost model as the
 * partbench fusion, so the two counts differ only by which nodes the
 * search finds.
 */
#include "transform/folded.h"
#include "transform/fuse.h"

#include <stdlib.h>
#include <string.h>

typedef struct item {
	int node;
	double per_elem;
} item;

static int cmp_item(const void *a, const void *b)
{
	const item *x = a, *y = b;
	if (x->per_elem != y->per_elem)
		return x->per_elem < y->per_elem ? -1 : 1;
	return x->node - y->node;
}

/* p's only (non-folded) consumer is one node and p is no graph output. */
static int only_feeds(const pb_graph *g, const unsigned char *folded, int p)
{
	const pb_node *nd = &g->nodes[p];
	int k = 0;
	for (int j = 0; j < nd->n_succs; j++)
		k += !folded[nd->succs[j]];
	if (k != 1)
		return 0;
	for (int j = 0; j < nd->n_outputs; j++)
		if (nd->outputs[j] >= 0 && g->tensors[nd->outputs[j]].is_output)
			return 0;
	return 1;
}

int pb_fuse_xla_baseline(const pb_graph *g, const pb_fuse_opts *o, pb_fuse_baseline *out,
                         pb_error *err)
{
	memset(out, 0, sizeof *out);
	pb_fuse_rules defaults;
	const pb_fuse_rules *rules = o->rules;
	if (!rules) {
		pb_fuse_rules_default(&defaults);
		rules = &defaults;
	}
	const pb_fuse_model *m = &o->model;
	int n = g->n_nodes;
	item *set = malloc((size_t)(n + 1) * sizeof *set);
	int *trial = malloc((size_t)(n + 1) * sizeof *trial);
	unsigned char *folded = calloc((size_t)n + 1, 1);
	if (!set || !trial || !folded) {
		free(set);
		free(trial);
		free(folded);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
	}
	pb_fuse_model unit = {0, 1e300, 1, 1e300, 0, 2};
	double before = 0, saved = 0;
	int merged = 0, n_folded = o->keep_constants ? 0 : pb_transform_folded(g, folded);
	for (int v = 0; v < n; v++)
		if (!folded[v])
			before += pb_fuse_node_time(m, g, v);
	for (int c = 0; c < n; c++) {
		const pb_node *cn = &g->nodes[c];
		int k = 0;
		if (folded[c])
			continue;
		for (int j = 0; j < cn->n_preds; j++) {
			int p = cn->preds[j];
			if (!folded[p] && only_feeds(g, folded, p) &&
			    pb_fuse_rules_fusable(rules, g, p)) {
				set[k].node = p;
				set[k].per_elem = pb_fuse_node_time(&unit, g, p);
				k++;
			}
		}
		if (k < 2)
			continue;
		out->sets++;
		out->candidates += k;
		qsort(set, (size_t)k, sizeof *set, cmp_item);
		int ok = 0;
		double solo = 0, gain = 0;
		for (int i = 0; i <= k; i++) {
			if (i < k && ok > 0 && ok < m->max_members) {
				trial[ok] = set[i].node;
				double s2 = solo + pb_fuse_node_time(m, g, set[i].node);
				double gn = s2 - pb_fuse_set_time(m, g, trial, ok + 1);
				if (gn > gain && gn > 0) {
					ok++;
					solo = s2;
					gain = gn;
					continue;
				}
			}
			if (ok >= 2 && gain > m->min_gain) {
				out->fused += ok;
				merged += ok - 1;
				saved += gain;
			}
			if (i == k)
				break;
			trial[0] = set[i].node;
			ok = 1;
			solo = pb_fuse_node_time(m, g, set[i].node);
			gain = 0;
		}
	}
	out->launches_after = n - n_folded - merged;
	out->time_after = before - saved;
	free(folded);
	free(set);
	free(trial);
	return PB_OK;
}
