/*
 * shard/search/search_rows.h — the state of a strategy search over grouping schemes:
 * the scheme table (one row per scheme with its solved figures), the
 * incumbent events, the best row so far, and solving one row.
 *
 * Its types are search_types.h. This is the part that the serial steps (search.c) and the forked
 * workers (parallel.c) share; it calls neither of them, nor the output (search_report.c). The full
 * interface of the search is shard/search/search.h.
 */
#ifndef PB_SHARD_SEARCH_ROWS_H
#define PB_SHARD_SEARCH_ROWS_H

#include "shard/search/search_types.h"

/* scheme: "4x4" to solve one scheme, NULL for all with at most max_axes axes.
 * g must outlive the search (the cluster is copied, its name too). */
int pb_search_rows_new(const pb_graph *g, const pb_cluster *c, const pb_shard_opts *o,
                       const char *scheme, int max_axes, const char *lp_path, pb_shard_search **out,
                       pb_error *err);
void pb_search_rows_free(pb_shard_search *s);

/* Pieces of a step, shared by the serial and the parallel search: solve row
 * i (a failed scheme becomes a row error; only PB_ENOMEM is returned; on the
 * stepping solver's coroutine the solve yields at every new incumbent and
 * after yield_after seconds of a slice), and whether a solved row beats the
 * best so far. */
int pb_search_rows_solve_row(pb_shard_search *s, int i, pb_shard_problem **pp, pb_shard_result *r,
                             pb_error *err);
int pb_search_rows_better(const pb_shard_search *s, int i);
/* The waves of shard --pipeline auto's operator-level schemes (cut_wave):
 * two rows at once, as many as the forked workers of a 2-core machine. */
#define PB_SHARD_CUT_WAVE 2
/* The cutoff of row i under s->cut_wave: the least step time of a plan that
 * fits among the rows of the waves before row i's (0: none). */
double pb_search_rows_wave_cutoff(const pb_shard_search *s, int i);
/* The first row after row i's wave (s->n_rows without waves). */
int pb_search_rows_wave_end(const pb_shard_search *s, int i);
/* The options row i was solved with (its recomputation choice). */
void pb_search_rows_row_opts(const pb_shard_search *s, int i, pb_shard_opts *o);
/* A slice of the coroutine's work starts now: no new incumbent yet, and the
 * yield_after clock restarts. */
void pb_search_rows_slice_start(pb_shard_search *s);
/* Appends an incumbent event (scheme row, objective and bound in seconds,
 * time). */
void pb_search_rows_add_event(pb_shard_search *s, int row, double objective, double bound,
                              double at);

#endif
