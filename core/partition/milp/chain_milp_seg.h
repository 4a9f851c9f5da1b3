/*
 * partition/milp/chain_milp_seg.h — the cost terms of segments [a, b) for one end b at a
 * time, each in O(log m), for the MILP's probes (chain_milp.c).
 *
 * walk() in chain_milp.c evaluates the segments ending at b by moving the start down
 * one layer at a time: O(m) per end, O(m^2) per probe (a 10,000-layer chain on 64
 * cores: 45 s to the proof, almost all of it in those walks). Here the ends advance
 * b = 1, 2, ..., m and two Fenwick trees over start positions keep, for the current b,
 *   in(a, b)  = sum of out_bytes(u), u < a with a successor in [a, b): u adds its
 *               bytes to every a in (u, last successor of u below b], a range update
 *               each time b passes one of u's successors (point query);
 *   own(a, b) = sum of out_bytes(u), u in [a, b) with a successor below b: u is
 *               switched on when b passes its first successor (range query).
 * Both are sums of out_bytes, whole byte counts (exact in a double below 2^53), so
 * they equal walk()'s sums bit for bit whatever the order of the additions.
 */
#ifndef PB_PARTITION_MILP_SEG_H
#define PB_PARTITION_MILP_SEG_H

#include "partition/chain/chain_problem.h"

typedef struct pb_milp_seg {
	const pb_part_problem *P;
	int b;         /* segments end here (0 .. m) */
	double *in_f;  /* Fenwick tree of in's range updates (m + 1 entries) */
	double *own_f; /* Fenwick tree of own's switched-on producers (m + 1 entries) */
	int *last;     /* per layer: its last successor below b, itself if none */
	long evals;    /* segments evaluated since init (the tests count the work) */
} pb_milp_seg;

/* Costs of [a, b) for the current end b (the same formulas as walk()). */
typedef struct pb_milp_seg_cost {
	double macs, routing, storage; /* MACs; routing seconds; storage bytes (all cores) */
} pb_milp_seg_cost;

int pb_milp_seg_init(pb_milp_seg *S, const pb_part_problem *P);
/* Back to b = 0 (a new pass). */
void pb_milp_seg_reset(pb_milp_seg *S);
/* Moves the end to b + 1 (takes in layer b). */
void pb_milp_seg_advance(pb_milp_seg *S);
/* The costs of [a, b) for the current b, 0 <= a < b. */
void pb_milp_seg_cost_of(pb_milp_seg *S, int a, pb_milp_seg_cost *out);
void pb_milp_seg_free(pb_milp_seg *S);

#endif
