/*
 * partition/milp/chain_milp_seg.c — segment costs by end position with two Fenwick trees
 * (chain_milp_seg.h documents the idea).
 */
#include "partition/milp/chain_milp_seg.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

/* Fenwick trees over positions 0..m (stored 1-based). */
static void fw_add(double *f, int m1, int i, double x)
{
	for (i++; i <= m1; i += i & -i)
		f[i - 1] += x;
}

/* Sum of entries 0..i-1. */
static double fw_prefix(const double *f, int i)
{
	double s = 0;
	for (; i > 0; i -= i & -i)
		s += f[i - 1];
	return s;
}

int pb_milp_seg_init(pb_milp_seg *S, const pb_part_problem *P)
{
	memset(S, 0, sizeof *S);
	S->P = P;
	size_t m1 = (size_t)P->m + 1;
	S->in_f = malloc(m1 * sizeof *S->in_f);
	S->own_f = malloc(m1 * sizeof *S->own_f);
	S->last = malloc(m1 * sizeof *S->last);
	if (!S->in_f || !S->own_f || !S->last) {
		pb_milp_seg_free(S);
		return PB_ENOMEM;
	}
	pb_milp_seg_reset(S);
	return PB_OK;
}

void pb_milp_seg_reset(pb_milp_seg *S)
{
	const int m = S->P->m;
	S->b = 0;
	memset(S->in_f, 0, ((size_t)m + 1) * sizeof *S->in_f);
	memset(S->own_f, 0, ((size_t)m + 1) * sizeof *S->own_f);
	for (int u = 0; u <= m; u++)
		S->last[u] = u;
}

void pb_milp_seg_advance(pb_milp_seg *S)
{
	const pb_part_problem *P = S->P;
	const int m1 = P->m + 1, v = S->b;
	for (int e = P->pred_off[v]; e < P->pred_off[v + 1]; e++) {
		int u = P->pred[e];
		if (S->last[u] >= v) /* a repeated edge */
			continue;
		if (S->last[u] == u) /* v is u's first successor: u's output stays inside */
			fw_add(S->own_f, m1, u, P->ob[u]);
		/* starts a in (last[u], v] now receive u's output */
		fw_add(S->in_f, m1, S->last[u] + 1, P->ob[u]);
		fw_add(S->in_f, m1, v + 1, -P->ob[u]);
		S->last[u] = v;
	}
	S->b++;
}

void pb_milp_seg_cost_of(pb_milp_seg *S, int a, pb_milp_seg_cost *out)
{
	const pb_part_problem *P = S->P;
	const int b = S->b;
	S->evals++;
	double in = fw_prefix(S->in_f, a + 1);
	double own = fw_prefix(S->own_f, b) - fw_prefix(S->own_f, a);
	double inb = in > 0 ? in : 0;
	out->macs = P->pmacs[b] - P->pmacs[a];
	out->routing = (inb + own) / P->hw.bandwidth;
	out->storage = P->pstore[b] - P->pstore[a] + inb;
}

void pb_milp_seg_free(pb_milp_seg *S)
{
	free(S->in_f);
	free(S->own_f);
	free(S->last);
	S->in_f = S->own_f = NULL;
	S->last = NULL;
}
