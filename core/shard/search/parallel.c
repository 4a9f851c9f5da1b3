/*
 * shard/search/parallel.c — the grouping schemes solved concurrently in forked
 * worker processes (parallel.h; search.c's pb_search_run_parallel
 * calls it when there are workers to use).
 *
 * Why processes: DESIGN.md keeps every GLPK call on a main thread, and the
 * schemes share nothing but the read-only graph, so fork() gives each
 * worker its own GLPK environment and a copy-on-write graph for free.
 * Worker for row i: pb_search_rows_solve_row (the serial code), then one
 * message on its pipe: a header (the solved row, the group count, the
 * incumbent count), the choice per group, the incumbents (objective, time);
 * then _exit. The parent runs at most `jobs` workers, reads their pipes with
 * poll(), and merges in scheme order once all are done: the rows, the
 * incumbents, and the best row by the same comparison as the serial steps.
 * The best row's problem is rebuilt in the parent (deterministic) and its
 * result re-evaluated from the worker's choice, so the plan, the report and
 * the task lists are those of the serial run. Under cut waves
 * (search_types.h) the workers of a wave start once the wave before is
 * merged, so their cutoffs are the serial run's.
 * It uses the search's rows (search_rows.h) and plan (search_report.h) and
 * never the serial steps (search.c), which call it.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shard/search/parallel.h"
#include "shard/search/parallel_ranks.h"
#include "shard/search/search_report.h"
#include "shard/strategy/strategy_problem.h"
#include "util/child_pipe.h"
#include "util/ranks.h"

typedef struct wire_head {
	int rc; /* PB_OK, or PB_ENOMEM */
	char errmsg[256];
	pb_shard_row row;
	int n_groups;
	int n_events;
	int optimal;
	long n_incumbents;
	double solve_seconds;
} wire_head;

typedef struct wire_event {
	double objective, bound, at;
} wire_event;

typedef struct worker {
	pid_t pid;
	int fd;
	int row;
	pb_pipe_buf in; /* what the worker wrote so far */
} worker;

static void run_child(pb_shard_search *s, int i, int fd)
{
	wire_head h;
	memset(&h, 0, sizeof h);
	pb_shard_problem *p = NULL;
	pb_shard_result r;
	pb_error e = {0};
	int ev0 = s->n_events;
	h.rc = pb_search_rows_solve_row(s, i, &p, &r, &e);
	if (h.rc)
		snprintf(h.errmsg, sizeof h.errmsg, "%s", e.msg);
	h.row = s->rows[i];
	h.n_groups = p ? p->n_groups : 0;
	h.n_events = s->n_events - ev0;
	h.optimal = p ? r.optimal : 0;
	h.n_incumbents = p ? r.n_incumbents : 0;
	h.solve_seconds = p ? r.solve_seconds : 0;
	int bad = pb_write_all(fd, &h, sizeof h);
	if (!bad && h.n_groups)
		bad = pb_write_all(fd, r.choice, (size_t)h.n_groups * sizeof(int));
	for (int k = ev0; k < s->n_events && !bad; k++) {
		wire_event we = {s->events[k].objective, s->events[k].bound, s->events[k].at};
		bad = pb_write_all(fd, &we, sizeof we);
	}
	close(fd);
	_exit(bad ? 3 : 0);
}

static int start_worker(pb_shard_search *s, int i, worker *w, pb_error *err)
{
	int fds[2];
	if (pipe(fds) != 0)
		return pb_err(err, PB_EINTERNAL, "shard: pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return pb_err(err, PB_EINTERNAL, "shard: fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(fds[0]);
		run_child(s, i, fds[1]);
	}
	close(fds[1]);
	memset(w, 0, sizeof *w);
	w->pid = pid;
	w->fd = fds[0];
	w->row = i;
	return PB_OK;
}

/* Stores a finished worker's row; *choice receives its choice per group
 * (owned by the caller) when the scheme was solved. */
static int finish_worker(pb_shard_search *s, worker *w, int **choices, pb_error *err)
{
	int status = 0;
	while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
		;
	close(w->fd);
	pb_shard_row *row = &s->rows[w->row];
	wire_head h;
	int rc = PB_OK;
	if (w->in.len < sizeof h) {
		row->status = -1;
		if (WIFSIGNALED(status))
			snprintf(row->error, sizeof row->error,
			         "the worker solving this scheme died (signal %d)",
			         WTERMSIG(status));
		else
			snprintf(row->error, sizeof row->error,
			         "the worker solving this scheme exited with status %d",
			         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		goto out;
	}
	memcpy(&h, w->in.buf, sizeof h);
	size_t need =
	    sizeof h + (size_t)h.n_groups * sizeof(int) + (size_t)h.n_events * sizeof(wire_event);
	if (h.rc) {
		rc = pb_err(err, h.rc, "%s", h.errmsg);
		goto out;
	}
	if (w->in.len < need) {
		row->status = -1;
		snprintf(row->error, sizeof row->error,
		         "the worker solving this scheme sent a truncated result");
		goto out;
	}
	*row = h.row;
	if (h.row.status == 1) {
		int *c = malloc((size_t)(h.n_groups + 1) * sizeof *c);
		if (!c) {
			rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
			goto out;
		}
		memcpy(c, w->in.buf + sizeof h, (size_t)h.n_groups * sizeof *c);
		choices[w->row] = c;
	}
	const char *ev = w->in.buf + sizeof h + (size_t)h.n_groups * sizeof(int);
	for (int k = 0; k < h.n_events; k++) {
		wire_event we;
		memcpy(&we, ev + (size_t)k * sizeof we, sizeof we);
		pb_search_rows_add_event(s, w->row, we.objective, we.bound, we.at);
	}
out:
	free(w->in.buf);
	w->in.buf = NULL;
	w->pid = 0;
	return rc;
}

static void kill_workers(worker *ws, int n)
{
	for (int k = 0; k < n; k++)
		if (ws[k].pid > 0) {
			kill(ws[k].pid, SIGKILL);
			while (waitpid(ws[k].pid, NULL, 0) < 0 && errno == EINTR)
				;
			close(ws[k].fd);
			free(ws[k].in.buf);
			ws[k].pid = 0;
		}
}

/* The rows' incumbents arrive in completion order; the serial run lists them
 * in scheme order, each row's in its solve order (stable: their "at"
 * restarts with each recomputation choice's solve, so it cannot order them). */
static void sort_events(pb_shard_event *e, int n)
{
	for (int i = 1; i < n; i++) {
		pb_shard_event x = e[i];
		int j = i;
		for (; j > 0 && e[j - 1].scheme > x.scheme; j--)
			e[j] = e[j - 1];
		e[j] = x;
	}
}

int pb_parallel_solve(pb_shard_search *s, int jobs, int (*progress)(void *ud, int done, int total),
                      void *ud, pb_error *err)
{
	int todo = s->n_rows - s->next;
	if (todo <= 0)
		return PB_OK;
	if (jobs < 1)
		jobs = 1;
	if (jobs > todo)
		jobs = todo;
	worker *ws = calloc((size_t)jobs, sizeof *ws);
	int **choices = calloc((size_t)s->n_rows, sizeof *choices);
	struct pollfd *pf = calloc((size_t)jobs, sizeof *pf);
	if (!ws || !choices || !pf) {
		free(ws);
		free(choices);
		free(pf);
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	}
	/* Output buffered in this process must not be flushed twice. */
	fflush(NULL);
	int first = s->next, finished = 0, rc = PB_OK;
	int launch = first;
	int ev0 = s->n_events;
	if (pb_ranks_size() > 1) { /* mpirun -np N: the schemes across the ranks */
		rc = pb_parallel_ranks_solve(s, choices, progress, ud, err);
		finished = todo;
	}
	/* under cut waves (search_types.h) a wave starts when the one before
	 * has finished: its rows' cutoff is read from the rows merged */
	int wend = launch < s->n_rows ? pb_search_rows_wave_end(s, launch) : s->n_rows;
	while (rc == PB_OK && finished < todo) {
		if (launch == wend && launch < s->n_rows && finished == launch - first)
			wend = pb_search_rows_wave_end(s, launch);
		for (int k = 0; k < jobs && launch < wend && rc == PB_OK; k++)
			if (ws[k].pid == 0)
				rc = start_worker(s, launch++, &ws[k], err);
		if (rc)
			break;
		if (progress && progress(ud, first + finished, s->n_rows)) {
			rc = pb_err(err, PB_ECANCEL, "shard: cancelled");
			break;
		}
		int np = 0;
		int idx[64];
		for (int k = 0; k < jobs && np < 64; k++)
			if (ws[k].pid > 0) {
				pf[np].fd = ws[k].fd;
				pf[np].events = POLLIN;
				pf[np].revents = 0;
				idx[np++] = k;
			}
		int n = poll(pf, (nfds_t)np, 50);
		if (n < 0 && errno != EINTR) {
			rc = pb_err(err, PB_EINTERNAL, "shard: poll: %s", strerror(errno));
			break;
		}
		for (int q = 0; q < np && n > 0 && rc == PB_OK; q++) {
			if (!pf[q].revents)
				continue;
			worker *w = &ws[idx[q]];
			int e = pb_pipe_read(&w->in, w->fd);
			if (e == PB_PIPE_OOM)
				rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
			else if (e == PB_PIPE_EOF) {
				rc = finish_worker(s, w, choices, err);
				finished++;
			}
		}
	}
	kill_workers(ws, jobs);
	if (rc == PB_OK) {
		sort_events(s->events + ev0, s->n_events - ev0);
		/* The best row by the serial comparison, in scheme order; rows solved
		 * before keep their problem, a new best is rebuilt here. */
		int old = s->best;
		for (int i = first; i < s->n_rows; i++)
			if (pb_search_rows_better(s, i))
				s->best = i;
		int best = s->best;
		s->best = old;
		if (best != old) {
			pb_shard_problem *p = NULL;
			pb_shard_opts o;
			pb_search_rows_row_opts(s, best, &o);
			rc = pb_strategy_problem_build(s->g, &s->cl, &s->rows[best].mesh, &o, &p,
			                               err);
			if (rc == PB_OK) {
				pb_shard_result r;
				memset(&r, 0, sizeof r);
				r.choice = choices[best];
				choices[best] = NULL;
				pb_strategy_problem_evaluate(p, r.choice, &r);
				r.optimal = s->rows[best].optimal;
				r.solve_seconds = s->rows[best].seconds;
				r.n_incumbents = s->rows[best].incumbents;
				pb_strategy_problem_free(s->best_problem);
				pb_strategy_problem_result_free(&s->best_result);
				s->best_problem = p;
				s->best_result = r;
				s->best = best;
				pb_plan_free(s->plan);
				s->plan = pb_search_report_plan(s);
			}
		}
		s->next = s->n_rows;
	}
	for (int i = 0; i < s->n_rows; i++)
		free(choices[i]);
	free(choices);
	free(ws);
	free(pf);
	return rc;
}
