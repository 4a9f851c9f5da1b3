/*
 * util/proof_label.h — what a plan's figure is: proven optimal for the
 * problem as the user posed it, or the best found with a lower bound on that
 * problem and the gap, and the restrictions of the search space the method
 * applied (docs/shard.md, "Labels").
 *
 * Every plan kind (partition, shard, pipeline, dp x tp x pp, map, fuse)
 * fills one and writes it with pb_label_json: `optimal` (true only when
 * proven for the unrestricted problem), `bound` (a valid lower bound on the
 * unrestricted problem, in the unit of the plan's objective, null when none
 * is known), `gap` = (value - bound) / value (null without a bound) and
 * `restricted_by` (names of the restrictions applied; a restricted search
 * can still be proven optimal when its value meets the bound).
 */
#ifndef PB_UTIL_PROOF_LABEL_H
#define PB_UTIL_PROOF_LABEL_H

#include <jansson.h>
#include <stddef.h>

#define PB_LABEL_MAX 12

typedef struct pb_label {
	int optimal;  /* proven for the problem as posed */
	double value; /* the plan's objective */
	double bound; /* lower bound on the problem as posed, NAN when none */
	int n_restricted;
	const char *restricted_by[PB_LABEL_MAX]; /* static strings */
} pb_label;

/* An unproven label of value v: no bound, no restriction. */
void pb_label_init(pb_label *L, double value);
/* Adds a restriction (a static string; duplicates ignored). */
void pb_label_restrict(pb_label *L, const char *what);
/* Sets the bound (the larger of the current one and b) and marks the label
 * optimal when the value attains it (relative 1e-9). */
void pb_label_bound(pb_label *L, double b);
/* (value - bound) / value, 0 when optimal, NAN without a bound. */
double pb_label_gap(const pb_label *L);
/* Sets optimal, bound, gap and restricted_by in obj. */
void pb_label_json(json_t *obj, const pb_label *L);
/* The words the reports print: "optimal" or "best found, bound B, gap G%"
 * ("best found, no bound"), then "; restricted by a, b" when restricted;
 * fmt formats the value's unit (NULL: %.6g). Returns buf. */
char *pb_label_text(const pb_label *L, char *(*fmt)(double, char *, size_t), char *buf, size_t len);

#endif
