/*
 * shard/search/parallel_ranks.c — grouping schemes across MPI ranks
 * (parallel_ranks.h). Each rank solves its share of the rows with the serial
 * code and encodes each as one record: a header (row index, status code and
 * message, the solved row, group and event counts), the choice per group,
 * the incumbent events (objective, bound, time). One MPI_Allgatherv gives
 * every rank all records; they are decoded in scheme order. Static
 * round-robin: which rank solves a row does not change the result, only the
 * solve times in the report, which are wall times on whichever host.
 */
#include "shard/search/parallel_ranks.h"
#include "shard/strategy/strategy_problem.h"

#include <stdlib.h>
#include <string.h>

#include "util/ranks.h"

typedef struct rec_head {
	int index;
	int rc;
	char errmsg[256];
	pb_shard_row row;
	int n_groups;
	int n_events;
} rec_head;

typedef struct rec_event {
	double objective, bound, at;
} rec_event;

typedef struct out_buf {
	char *b;
	size_t len, cap;
} out_buf;

static int put(out_buf *o, const void *p, size_t n)
{
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 4096;
		while (cap < o->len + n)
			cap *= 2;
		char *b = realloc(o->b, cap);
		if (!b)
			return -1;
		o->b = b;
		o->cap = cap;
	}
	memcpy(o->b + o->len, p, n);
	o->len += n;
	return 0;
}

/* Solves row i here and appends its record. */
static int solve_one(pb_shard_search *s, int i, out_buf *o)
{
	rec_head h;
	memset(&h, 0, sizeof h);
	pb_shard_problem *p = NULL;
	pb_shard_result r;
	pb_error e = {0};
	int ev0 = s->n_events;
	h.index = i;
	h.rc = pb_search_rows_solve_row(s, i, &p, &r, &e);
	if (h.rc)
		snprintf(h.errmsg, sizeof h.errmsg, "%s", e.msg);
	h.row = s->rows[i];
	h.n_groups = p && h.row.status == 1 ? p->n_groups : 0;
	h.n_events = s->n_events - ev0;
	int bad = put(o, &h, sizeof h);
	if (!bad && h.n_groups)
		bad = put(o, r.choice, (size_t)h.n_groups * sizeof(int));
	for (int k = ev0; k < s->n_events && !bad; k++) {
		rec_event we = {s->events[k].objective, s->events[k].bound, s->events[k].at};
		bad = put(o, &we, sizeof we);
	}
	s->n_events = ev0; /* they come back, in scheme order, with every rank's */
	if (p) {
		pb_strategy_problem_result_free(&r);
		pb_strategy_problem_free(p);
	}
	return bad ? -1 : 0;
}

/* Rows [from, to): each rank solves its share, every rank gets all. */
static int solve_span(pb_shard_search *s, int from, int to, int **choices,
                      int (*progress)(void *ud, int done, int total), void *ud, pb_error *err)
{
	int size = pb_ranks_size(), me = pb_ranks_rank();
	out_buf o = {0};
	int rc = PB_OK, mine = 0;
	for (int i = from + me; i < to && rc == PB_OK; i += size) {
		if (progress && progress(ud, from + mine * size, s->n_rows))
			rc = pb_err(err, PB_ECANCEL, "shard: cancelled");
		else if (solve_one(s, i, &o))
			rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
		mine++;
	}
	if (rc) {
		free(o.b);
		return rc;
	}
	size_t *lens = calloc((size_t)size, sizeof *lens);
	char *all = NULL;
	if (!lens) {
		free(o.b);
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	}
	rc = pb_ranks_allgather(o.b, o.len, &all, lens, err);
	free(o.b);
	size_t total = 0;
	for (int r = 0; r < size && !rc; r++)
		total += lens[r];
	free(lens);
	if (rc)
		return rc;
	/* records by row: the concatenation holds each row once */
	size_t *at = calloc((size_t)s->n_rows, sizeof *at);
	char *seen = calloc((size_t)s->n_rows, 1);
	if (!at || !seen)
		rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
	for (size_t pos = 0; !rc && pos < total;) {
		rec_head h;
		if (total - pos < sizeof h) {
			rc = pb_err(err, PB_EINTERNAL, "shard: a rank sent a truncated result");
			break;
		}
		memcpy(&h, all + pos, sizeof h);
		size_t need = sizeof h + (size_t)h.n_groups * sizeof(int) +
		              (size_t)h.n_events * sizeof(rec_event);
		if (h.index < from || h.index >= to || h.n_groups < 0 || h.n_events < 0 ||
		    seen[h.index] || total - pos < need) {
			rc = pb_err(err, PB_EINTERNAL, "shard: a rank sent a malformed result");
			break;
		}
		seen[h.index] = 1;
		at[h.index] = pos;
		pos += need;
	}
	for (int i = from; i < to && !rc; i++) {
		if (!seen[i]) {
			rc = pb_err(err, PB_EINTERNAL, "shard: no rank solved scheme %s",
			            s->rows[i].mesh.name);
			break;
		}
		rec_head h;
		memcpy(&h, all + at[i], sizeof h);
		if (h.rc) {
			rc = pb_err(err, h.rc, "%s", h.errmsg);
			break;
		}
		s->rows[i] = h.row;
		if (h.row.status == 1 && h.n_groups > 0) {
			int *c = malloc((size_t)(h.n_groups + 1) * sizeof *c);
			if (!c) {
				rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
				break;
			}
			memcpy(c, all + at[i] + sizeof h, (size_t)h.n_groups * sizeof *c);
			choices[i] = c;
		}
		const char *ev = all + at[i] + sizeof h + (size_t)h.n_groups * sizeof(int);
		for (int k = 0; k < h.n_events; k++) {
			rec_event we;
			memcpy(&we, ev + (size_t)k * sizeof we, sizeof we);
			pb_search_rows_add_event(s, i, we.objective, we.bound, we.at);
		}
	}
	free(at);
	free(seen);
	free(all);
	return rc;
}

int pb_parallel_ranks_solve(pb_shard_search *s, int **choices,
                            int (*progress)(void *ud, int done, int total), void *ud, pb_error *err)
{
	/* under cut waves (search_types.h) wave by wave: a wave's rows are cut by
	 * the rows of the waves before, which every rank has after the gather */
	int rc = PB_OK;
	for (int from = s->next, to; from < s->n_rows && rc == PB_OK; from = to) {
		to = pb_search_rows_wave_end(s, from);
		rc = solve_span(s, from, to, choices, progress, ud, err);
	}
	return rc;
}
