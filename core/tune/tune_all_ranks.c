/*
 * tune/tune_all_ranks.c — running whole-model tuning (tune_all.h) on one rank
 * or coordinated across an MPI job (util/ranks.h).
 *
 * Rank 0 is the coordinator and a worker: it hands one shape at a time to
 * every other rank (biggest share of the model first), tunes shapes itself
 * while they work, and services their messages from its tuner's progress
 * callback (every policy update) or, when nothing is left to tune locally,
 * in a polling loop. Messages (tags below):
 *   0 -> r  WORK  head (shape, key, time budget, earlier measurements n) +
 *                 n pb_tune_record of the shape (resumed runs); STOP
 *   r -> 0  HELLO host name; LINE one log line, sent as soon as measured;
 *           BEAT  empty, at most once a second while tuning; DONE the
 *           shape's summary line; FAIL the error message
 * Rank 0 appends LINE and DONE to the log, so it holds every measurement
 * made, even of a rank that dies later. A rank silent for rank_timeout
 * seconds while it has a shape is taken for dead; its shape is reported
 * missing and never handed out again in this run (a late message from it
 * is still taken: it was only slow).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/ranks.h"
#include "tune/log.h"
#include "tune/tune_all.h"

enum { TAG_WORK = 1, TAG_STOP, TAG_HELLO, TAG_LINE, TAG_BEAT, TAG_DONE, TAG_FAIL };
/* TAG_STOP's text when a rank died: the survivors exit without MPI_Finalize */
#define STOP_DEAD "dead"

typedef struct work_head {
	int shape;
	int n_prior;
	double budget;
	char key[128];
} work_head;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct coord {
	pb_tune_all *a;
	const pb_tune_all_opts *o;
	pb_tune_all_report *r;
	FILE *log;
	const char *path;
	int *queue, nq, qi;
	int size;
	int *busy;      /* shape per rank, -1 idle */
	int *dead;      /* taken for dead */
	double *seen;   /* last message */
	double *budget; /* time budget of the shape in flight */
	int *lines;     /* lines received for the shape in flight */
	char (*host)[64];
	double pool;           /* budget x ranks: seconds of tuning to share out */
	double used, inflight; /* seconds used by finished shapes, given to shapes in flight */
	double share_left;     /* share of the shapes not handed out yet */
	int finished, todo;    /* shapes finished (tuned or missing) / to do */
	int local;             /* shape rank 0 tunes now, -1 none */
	double last_draw;
	char local_line[200];
} coord;

static double give_budget(coord *c, int s)
{
	double share = c->a->shapes[s].share;
	double b = 0;
	if (c->o->budget > 0) {
		double left = c->pool - c->used - c->inflight;
		b = left > 0 && c->share_left > 0 ? left * share / c->share_left : 0;
		if (b > left)
			b = left;
		if (b < 1e-3)
			b = 1e-3; /* the tuner still takes one valid measurement */
		c->inflight += b;
	}
	c->share_left -= share;
	return b;
}

static void release_budget(coord *c, double b, double spent)
{
	if (c->o->budget <= 0)
		return;
	c->inflight -= b;
	c->used += spent;
}

/* Earlier measurements of shape s (resumed runs), from the log. */
static int prior_of(coord *c, int s, pb_tune_record **recs, int *n, pb_error *err)
{
	*recs = NULL;
	*n = 0;
	if (!c->o->tune.resume)
		return PB_OK;
	pb_tune_space sp;
	pb_tune_space_init(&sp, &c->a->shapes[s].shape);
	return pb_tune_log_load(c->path, &sp, recs, n, err);
}

static void mark_missing(coord *c, int s, const char *fmt, const char *a1, int rank)
{
	pb_tune_all_shape *sh = &c->a->shapes[s];
	sh->state = PB_TUNE_ALL_MISSING;
	sh->rank = rank;
	snprintf(sh->why, sizeof sh->why, fmt, rank, a1);
	c->r->missing++;
	c->finished++;
}

static int send_work(coord *c, int rank, pb_error *err)
{
	if (c->qi >= c->nq)
		return PB_OK;
	int s = c->queue[c->qi++];
	pb_tune_record *recs;
	int n;
	int rc = prior_of(c, s, &recs, &n, err);
	if (rc)
		return rc;
	work_head h;
	memset(&h, 0, sizeof h);
	h.shape = s;
	h.n_prior = n;
	h.budget = give_budget(c, s);
	snprintf(h.key, sizeof h.key, "%s", c->a->shapes[s].key);
	size_t len = sizeof h + (size_t)n * sizeof *recs;
	char *msg = malloc(len);
	if (!msg) {
		free(recs);
		return pb_err(err, PB_ENOMEM, "tune: out of memory");
	}
	memcpy(msg, &h, sizeof h);
	if (n)
		memcpy(msg + sizeof h, recs, (size_t)n * sizeof *recs);
	free(recs);
	rc = pb_ranks_send(rank, TAG_WORK, msg, len, err);
	free(msg);
	if (rc)
		return rc;
	c->busy[rank] = s;
	c->budget[rank] = h.budget;
	c->lines[rank] = 0;
	c->seen[rank] = now_s();
	return PB_OK;
}

/* A log line from a rank must be a measurement of the shape it tunes. */
static int check_line(coord *c, int s, const char *line, int summary)
{
	json_error_t je;
	json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &je);
	int ok = o && json_is_object(o) && !strncmp(line, "{\"key\":", 7);
	if (ok) {
		const char *key = json_string_value(json_object_get(o, "key"));
		const char *m = json_string_value(json_object_get(o, "method"));
		ok = key && !strcmp(key, c->a->shapes[s].key) && m &&
		     (strcmp(m, PB_TUNE_LOG_SHAPE_METHOD) == 0) == summary && !strchr(line, '\n');
	}
	if (ok && summary)
		ok = pb_tune_all_take_summary(c->a, s, o, PB_TUNE_ALL_TUNED) == 0;
	json_decref(o);
	return ok;
}

static int handle(coord *c, int src, int tag, const char *buf, size_t len, pb_error *err)
{
	if (src <= 0 || src >= c->size)
		return PB_OK;
	c->seen[src] = now_s();
	if (c->dead[src]) { /* only slow: take it back */
		c->dead[src] = 0;
		c->r->dead_ranks--;
	}
	int s = c->busy[src];
	switch (tag) {
	case TAG_HELLO:
		snprintf(c->host[src], sizeof c->host[src], "%s", buf);
		return PB_OK;
	case TAG_BEAT:
		return PB_OK;
	case TAG_LINE:
		if (s < 0 || strlen(buf) != len || !check_line(c, s, buf, 0))
			return PB_OK; /* not a measurement of its shape: dropped */
		c->lines[src]++;
		return pb_tune_log_append_line(c->log, c->path, buf, err);
	case TAG_DONE:
	case TAG_FAIL: {
		if (s < 0)
			return PB_OK;
		int was_missing = c->a->shapes[s].state == PB_TUNE_ALL_MISSING;
		if (tag == TAG_DONE && strlen(buf) == len && check_line(c, s, buf, 1)) {
			int rc = pb_tune_log_append_line(c->log, c->path, buf, err);
			if (rc)
				return rc;
			c->r->tuned++;
			if (was_missing)
				c->r->missing--;
			else
				c->finished++;
			release_budget(c, c->budget[src], c->a->shapes[s].tune_seconds);
		} else if (!was_missing) {
			mark_missing(c, s, "rank %d on %s failed: ", c->host[src], src);
			size_t l = strlen(c->a->shapes[s].why);
			snprintf(c->a->shapes[s].why + l, sizeof c->a->shapes[s].why - l, "%s",
			         tag == TAG_FAIL ? buf : "it sent a malformed summary");
			release_budget(c, c->budget[src], 0);
		}
		c->busy[src] = -1;
		return send_work(c, src, err);
	}
	default:
		return PB_OK;
	}
}

static void check_dead(coord *c)
{
	double t = now_s();
	for (int k = 1; k < c->size; k++) {
		if (c->dead[k] || c->busy[k] < 0 || t - c->seen[k] < c->o->rank_timeout)
			continue;
		c->dead[k] = 1;
		c->r->dead_ranks++;
		char what[160];
		snprintf(what, sizeof what, "%s", c->host[k][0] ? c->host[k] : "?");
		int s = c->busy[k];
		mark_missing(c, s, "rank %d on %s stopped answering while tuning it", what, k);
		size_t l = strlen(c->a->shapes[s].why);
		snprintf(c->a->shapes[s].why + l, sizeof c->a->shapes[s].why - l,
		         " (%d of its measurements are in the log)", c->lines[k]);
		release_budget(c, c->budget[k], 0);
		/* the shape stays assigned to it: a late DONE is still taken */
	}
}

/* Takes every waiting message (waiting up to timeout for the first). */
static int service(coord *c, double timeout, pb_error *err)
{
	if (c->size <= 1)
		return PB_OK;
	for (;;) {
		int src, tag;
		char *buf;
		size_t len;
		int got = pb_ranks_poll(-1, -1, timeout, &src, &tag, &buf, &len, err);
		if (got < 0)
			return -got;
		if (!got)
			break;
		int rc = handle(c, src, tag, buf, len, err);
		free(buf);
		if (rc)
			return rc;
		timeout = 0;
	}
	check_dead(c);
	return PB_OK;
}

static int draw(coord *c, double frac_local)
{
	if (!c->o->progress)
		return 0;
	int busy = 0, dead = 0;
	for (int k = 1; k < c->size; k++) {
		busy += c->busy[k] >= 0 && !c->dead[k];
		dead += c->dead[k];
	}
	char line[256];
	if (c->size > 1)
		snprintf(line, sizeof line, "shapes %d/%d  ranks %d busy %d dead  rank 0: %s",
		         c->finished, c->todo, busy, dead,
		         c->local >= 0 ? c->local_line : "waiting");
	else
		snprintf(line, sizeof line, "shape %d/%d %s  %s", c->finished + 1, c->todo,
		         c->local >= 0 ? c->a->shapes[c->local].key : "", c->local_line);
	double f = c->todo ? (c->finished + frac_local) / c->todo : 1;
	return c->o->progress(c->o->progress_ud, f > 1 ? 1 : f, line);
}

static int local_sink(void *ud, const char *line, pb_error *err)
{
	coord *c = ud;
	return pb_tune_log_append_line(c->log, c->path, line, err);
}

static int local_progress(void *ud, double fraction, const char *line)
{
	coord *c = ud;
	pb_error e = {0};
	snprintf(c->local_line, sizeof c->local_line, "%s", line);
	if (service(c, 0, &e))
		return 1;
	double t = now_s();
	if (t - c->last_draw < 0.1 && fraction < 1)
		return 0;
	c->last_draw = t;
	return draw(c, fraction);
}

static int cmp_share(const void *x, const void *y, void *ud)
{
	const pb_tune_all *a = ud;
	double p = a->shapes[*(const int *)x].share, q = a->shapes[*(const int *)y].share;
	if (p != q)
		return p > q ? -1 : 1;
	return *(const int *)x - *(const int *)y;
}

static void take_logged(void *ud, const char *key, const json_t *line)
{
	pb_tune_all *a = ud;
	for (int s = 0; s < a->n; s++)
		if (!strcmp(a->shapes[s].key, key) && a->shapes[s].state != PB_TUNE_ALL_LOGGED)
			pb_tune_all_take_summary(a, s, line, PB_TUNE_ALL_LOGGED);
}

static int coordinate(pb_tune_all *a, const pb_tune_all_opts *o, pb_tune_all_report *r,
                      pb_error *err)
{
	coord c = {a, o, r};
	c.path = o->tune.log_path;
	c.size = pb_ranks_size();
	c.local = -1;
	int rc = PB_OK;
	if (o->tune.resume)
		rc = pb_tune_log_foreach_shape(c.path, take_logged, a, err);
	if (!rc)
		rc = pb_tune_log_open(c.path, &c.log, err);
	c.queue = calloc((size_t)a->n + 1, sizeof *c.queue);
	c.busy = calloc((size_t)c.size, sizeof *c.busy);
	c.dead = calloc((size_t)c.size, sizeof *c.dead);
	c.seen = calloc((size_t)c.size, sizeof *c.seen);
	c.budget = calloc((size_t)c.size, sizeof *c.budget);
	c.lines = calloc((size_t)c.size, sizeof *c.lines);
	c.host = calloc((size_t)c.size, sizeof *c.host);
	if (!rc && (!c.queue || !c.busy || !c.dead || !c.seen || !c.budget || !c.lines || !c.host))
		rc = pb_err(err, PB_ENOMEM, "tune: out of memory");
	double t0 = now_s();
	if (!rc) {
		c.share_left = 0;
		for (int s = 0; s < a->n; s++)
			if (a->shapes[s].state == PB_TUNE_ALL_LOGGED) {
				r->logged++;
				/* tuned by a run without OpenBLAS: measured now, not logged */
				if (o->tune.baselines && a->shapes[s].openblas_gflops <= 0)
					pb_tune_all_openblas(a, s, o);
			} else {
				c.queue[c.nq++] = s;
				c.share_left += a->shapes[s].share;
			}
		qsort_r(c.queue, (size_t)c.nq, sizeof *c.queue, cmp_share, a);
		c.todo = c.nq;
		c.pool = o->budget * c.size;
		for (int k = 0; k < c.size; k++)
			c.busy[k] = -1;
		for (int k = 1; k < c.size && !rc; k++) {
			c.seen[k] = now_s();
			rc = send_work(&c, k, err);
		}
	}
	while (!rc) {
		if (c.qi < c.nq) {
			int s = c.queue[c.qi++];
			pb_tune_record *recs;
			int n;
			double b = give_budget(&c, s);
			c.local = s;
			c.local_line[0] = 0;
			rc = prior_of(&c, s, &recs, &n, err);
			char *summary = NULL;
			if (!rc)
				rc = pb_tune_all_one(a, s, o, recs, n, b, local_sink, &c,
				                     local_progress, &c, &summary, err);
			free(recs);
			c.local = -1;
			json_t *j = summary ? json_loads(summary, 0, NULL) : NULL;
			if (!rc && (!j || pb_tune_all_take_summary(a, s, j, PB_TUNE_ALL_TUNED)))
				rc = pb_err(err, PB_EINTERNAL, "tune: %s: bad summary",
				            a->shapes[s].key);
			json_decref(j);
			if (!rc)
				rc = pb_tune_log_append_line(c.log, c.path, summary, err);
			free(summary);
			if (!rc) {
				r->tuned++;
				c.finished++;
				release_budget(&c, b, a->shapes[s].tune_seconds);
			}
			if (!rc)
				rc = service(&c, 0, err);
			continue;
		}
		int waiting = 0;
		for (int k = 1; k < c.size; k++)
			waiting += c.busy[k] >= 0 && !c.dead[k];
		if (!waiting)
			break;
		rc = service(&c, 0.2, err);
		if (!rc && draw(&c, 0))
			rc = pb_err(err, PB_ECANCEL, "tune: cancelled");
	}
	/* the others stop, a rank taken for dead too: it may only have been slow,
	 * and would wait for work for ever (a send to a dead rank returns) */
	pb_error ignore = {0};
	const char *why = r->dead_ranks ? STOP_DEAD : "";
	for (int k = 1; k < c.size && c.busy; k++)
		pb_ranks_send(k, TAG_STOP, why, strlen(why), &ignore);
	if (r->dead_ranks)
		pb_ranks_abandon();
	r->seconds = now_s() - t0;
	if (c.log) {
		int crc = pb_tune_log_close(c.log, c.path, rc != PB_OK, err);
		rc = rc ? rc : crc;
	}
	free(c.queue);
	free(c.busy);
	free(c.dead);
	free(c.seen);
	free(c.budget);
	free(c.lines);
	free(c.host);
	return rc;
}

/* ---- the other ranks ---- */
/* rank 0's stop message: a dead rank means no MPI_Finalize here either */
static void stopped(char *buf)
{
	if (buf && !strcmp(buf, STOP_DEAD))
		pb_ranks_abandon();
	free(buf);
}

typedef struct worker {
	double last_beat;
	int stop;
} worker;

static int worker_sink(void *ud, const char *line, pb_error *err)
{
	(void)ud;
	return pb_ranks_send(0, TAG_LINE, line, strlen(line), err);
}

static int worker_progress(void *ud, double fraction, const char *line)
{
	(void)fraction;
	(void)line;
	worker *w = ud;
	double t = now_s();
	if (t - w->last_beat < 1)
		return 0;
	w->last_beat = t;
	pb_error e = {0};
	if (pb_ranks_send(0, TAG_BEAT, "", 0, &e))
		return 1;
	int src, tag;
	char *buf;
	size_t len;
	/* rank 0 stopped the run (an error or a cancel there) */
	if (pb_ranks_poll(0, TAG_STOP, 0, &src, &tag, &buf, &len, &e) == 1) {
		stopped(buf);
		w->stop = 1;
		return 1;
	}
	return 0;
}

int pb_tune_all_worker(pb_tune_all *a, const pb_tune_all_opts *o, pb_error *err)
{
	worker w = {now_s(), 0};
	const char *host = pb_ranks_host();
	int rc = pb_ranks_send(0, TAG_HELLO, host, strlen(host) + 1, err);
	while (!rc && !w.stop) {
		int src, tag;
		char *buf;
		size_t len;
		int got = pb_ranks_poll(0, -1, 1.0, &src, &tag, &buf, &len, err);
		if (got < 0)
			return -got;
		if (!got)
			continue;
		if (tag == TAG_STOP) {
			stopped(buf);
			break;
		}
		work_head h;
		if (tag != TAG_WORK || len < sizeof h) {
			free(buf);
			continue;
		}
		memcpy(&h, buf, sizeof h);
		char *summary = NULL;
		pb_error e = {0};
		int bad = h.shape < 0 || h.shape >= a->n || h.n_prior < 0 ||
		          len != sizeof h + (size_t)h.n_prior * sizeof(pb_tune_record) ||
		          strncmp(h.key, a->shapes[h.shape].key, sizeof h.key);
		int trc;
		if (bad)
			trc =
			    pb_err(&e, PB_EINTERNAL,
			           "rank %d: shape %d is not '%.128s' here: do all ranks load the "
			           "same model?",
			           pb_ranks_rank(), h.shape, h.key);
		else {
			pb_tune_record *recs = NULL;
			if (h.n_prior > 0 && (recs = malloc((size_t)h.n_prior * sizeof *recs)))
				memcpy(recs, buf + sizeof h, (size_t)h.n_prior * sizeof *recs);
			trc = pb_tune_all_one(a, h.shape, o, recs, recs ? h.n_prior : 0, h.budget,
			                      worker_sink, &w, worker_progress, &w, &summary, &e);
			free(recs);
		}
		free(buf);
		if (w.stop)
			break;
		if (trc)
			rc = pb_ranks_send(0, TAG_FAIL, e.msg, strlen(e.msg), err);
		else
			rc = pb_ranks_send(0, TAG_DONE, summary, strlen(summary), err);
		free(summary);
	}
	return rc;
}

int pb_tune_all_run(pb_tune_all *a, const pb_tune_all_opts *o, pb_tune_all_report *r, pb_error *err)
{
	memset(r, 0, sizeof *r);
	r->ranks = pb_ranks_size();
	r->budget = o->budget;
	if (!o->tune.log_path)
		return pb_err(err, PB_EUSAGE,
		              "tune: --all needs --log FILE (the tuning log it writes)");
	if (pb_ranks_size() > 1) {
		/* every rank must have planned the same shapes */
		unsigned long long h = 1469598103934665603ull;
		for (int s = 0; s < a->n; s++)
			for (const char *p = a->shapes[s].key; *p; p++)
				h = (h ^ (unsigned char)*p) * 1099511628211ull;
		int same = 0;
		int rc = pb_ranks_agree(h, &same, err);
		if (rc)
			return rc;
		if (!same)
			return pb_err(
			    err, PB_EINPUT,
			    "tune: the ranks found different kernel shapes in %s: every rank "
			    "must load the same model (same file, same --input)",
			    a->g->path ? a->g->path : "the model");
		if (pb_ranks_rank() != 0)
			return pb_tune_all_worker(a, o, err);
	}
	return coordinate(a, o, r, err);
}
