/*
 * bench_milp_cancel.c — how live the partition MILP is as a workbench job: the
 * longest time it holds the thread between two yields, and the time from a cancel
 * to the job's end, per stage (probing, columns, root LP, branch and bound).
 *
 *   bench_milp_cancel [-c CANCELS] [-g PROBE_GAP] [-s SLICE_MS] [-t SECONDS] [-w] LAYOUT MODEL
 *
 * The solve runs as the workbench runs it (tui/jobs.c, cmd_partition.c): on a job
 * (util/job.h) resumed in slices of SLICE_MS (default 25); its body steps the MILP one
 * unit at a time, ticks, and stops when the job is cancelled, then frees the solver.
 * Part 1 (-w: skipped) runs one whole solve and prints, per stage, the hold times
 * (one resume of the job: the time the screen would wait) p50/p99/max, the stage's
 * seconds, and the result. Part 2 runs CANCELS (default 3) fresh solves per stage and
 * cancels each at a different point inside the stage (after 2, 2 + 4k slices in it);
 * it prints the wall and CPU time from pb_job_cancel to the job's end (the freed
 * solver included). -g sets the probing target (chain_milp.h; a large value such as
 * 0.05 leaves more work to the root LP and branch and bound); -t stops each solve
 * after SECONDS of solver time (the MILP's time limit).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hw.h"
#include "load.h"
#include "model/graph.h"
#include "partition/milp/chain_milp.h"
#include "partition/chain/chain_problem.h"
#include "util/job.h"

#define N_STAGES 4
static const char *const stages[N_STAGES] = {"probing", "columns", "root LP", "branch and bound"};

static double wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct run {
	pb_part_problem *P;
	pb_milp_opts o;
	pb_milp *M; /* while the body runs */
	pb_milp_stats st;
	int rc;
	char msg[256];
} run;

static void body(void *arg)
{
	run *r = arg;
	pb_error err = {0};
	int *ac = malloc((size_t)r->P->n * sizeof *ac), improved;
	r->rc = pb_milp_new_opts(r->P, &r->o, NULL, &r->M, &err);
	while (r->rc == PB_OK && !pb_milp_done(r->M)) {
		r->rc = pb_milp_step(r->M, 1, ac, &improved, &err);
		pb_job_tick();
		if (pb_job_cancelled())
			break;
	}
	if (r->M)
		pb_milp_stats_get(r->M, &r->st);
	snprintf(r->msg, sizeof r->msg, "%s", err.msg);
	pb_milp_free(r->M);
	r->M = NULL;
	free(ac);
}

static int stage_of(const run *r)
{
	if (!r->M)
		return 0; /* pb_milp_new's first probe */
	pb_milp_stats st;
	pb_milp_stats_get(r->M, &st);
	for (int s = 0; s < N_STAGES; s++)
		if (strcmp(st.stage, stages[s]) == 0)
			return s;
	return N_STAGES; /* done */
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
	if (n == 0)
		return NAN;
	int k = (int)(p * n + 0.5);
	if (k < 1)
		k = 1;
	return v[(k > n ? n : k) - 1];
}

static void whole(pb_part_problem *P, pb_milp_opts o, double slice)
{
	run r = {.P = P, .o = o};
	pb_job *j = pb_job_new(body, &r);
	int cap = 1 << 16, n[N_STAGES + 1] = {0};
	double *hold[N_STAGES + 1], secs[N_STAGES + 1] = {0};
	for (int s = 0; s <= N_STAGES; s++)
		hold[s] = malloc((size_t)cap * sizeof(double));
	double t0 = wall(), c0 = cpu();
	for (int done = 0; !done;) {
		int s = stage_of(&r);
		double t = wall();
		done = pb_job_resume(j, slice);
		double h = wall() - t;
		if (n[s] < cap)
			hold[s][n[s]++] = h;
		secs[s] += h;
	}
	double tw = wall() - t0, tc = cpu() - c0;
	printf("whole solve: %.3f s wall, %.3f s CPU; %s\n", tw, tc,
	       r.rc                            ? r.msg
	       : r.st.state == PB_MILP_OPTIMAL ? "proved optimal"
	                                       : "stopped at the limit");
	printf("  max(t) %.6f ms, bound %.6f ms, %ld probes, %ld nodes, %d columns\n",
	       r.st.incumbent * 1e3, r.st.bound * 1e3, r.st.probes, r.st.nodes, r.st.columns);
	printf("  %-18s %8s %9s %9s %9s %9s\n", "stage", "resumes", "seconds", "p50 ms", "p99 ms",
	       "max ms");
	for (int s = 0; s < N_STAGES; s++) {
		qsort(hold[s], (size_t)n[s], sizeof(double), cmp);
		printf("  %-18s %8d %9.3f %9.1f %9.1f %9.1f\n", stages[s], n[s], secs[s],
		       pct(hold[s], n[s], 0.5) * 1e3, pct(hold[s], n[s], 0.99) * 1e3,
		       n[s] ? hold[s][n[s] - 1] * 1e3 : NAN);
	}
	for (int s = 0; s <= N_STAGES; s++)
		free(hold[s]);
	pb_job_free(j);
	fflush(stdout);
}

/* One solve cancelled after `after` slices inside `stage`; -1 when the solve left the
 * stage (or ended) first. */
static int cancel_in(pb_part_problem *P, pb_milp_opts o, double slice, int stage, int after,
                     double *lat_wall, double *lat_cpu, double *at)
{
	run r = {.P = P, .o = o};
	pb_job *j = pb_job_new(body, &r);
	int in = 0, done = 0;
	double t0 = wall();
	while (!done) {
		int s = stage_of(&r);
		if (s > stage)
			break;
		if (s == stage && in++ == after)
			break;
		done = pb_job_resume(j, slice);
	}
	int ok = !done && stage_of(&r) == stage;
	*at = wall() - t0;
	double t = wall(), c = cpu();
	pb_job_cancel(j);
	while (!done)
		done = pb_job_resume(j, slice);
	*lat_wall = wall() - t;
	*lat_cpu = cpu() - c;
	pb_job_free(j);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	int cancels = 3, skip_whole = 0, opt;
	double gap = 0, slice = 0.025, limit = 0;
	while ((opt = getopt(argc, argv, "c:g:s:t:w")) != -1) {
		if (opt == 'c')
			cancels = atoi(optarg);
		else if (opt == 'g')
			gap = atof(optarg);
		else if (opt == 's')
			slice = atof(optarg) * 1e-3;
		else if (opt == 't')
			limit = atof(optarg);
		else if (opt == 'w')
			skip_whole = 1;
		else
			return 1;
	}
	if (argc - optind != 2) {
		fprintf(stderr,
		        "usage: %s [-c CANCELS] [-g PROBE_GAP] [-s SLICE_MS] [-t SECONDS] [-w] "
		        "LAYOUT MODEL\n",
		        argv[0]);
		return 1;
	}
	pb_error err = {0};
	pb_hw *hw;
	pb_manycore mc;
	pb_graph *g;
	pb_part_problem *P;
	if (pb_hw_load(argv[optind], &hw, &err) || pb_manycore_parse(hw, &mc, &err) ||
	    pb_graph_load(argv[optind + 1], NULL, &g, &err) ||
	    pb_part_problem_new(g, &mc, &P, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	pb_milp_opts o = {limit, gap};
	printf("# bench_milp_cancel %s %s: %d layers, %d cores, slice %.0f ms, probe gap %g (0: "
	       "default)\n",
	       argv[optind + 1], mc.name, P->m, P->n, slice * 1e3, gap);
	if (!skip_whole)
		whole(P, o, slice);
	printf("cancel: time from pb_job_cancel to the job's end (ms)\n");
	printf("  %-18s %10s %10s %10s\n", "stage", "at (s)", "wall ms", "CPU ms");
	for (int s = 0; s < N_STAGES; s++)
		for (int k = 0; k < cancels; k++) {
			double lw, lc, at;
			if (cancel_in(P, o, slice, s, 2 + 4 * k, &lw, &lc, &at)) {
				printf("  %-18s (the stage ended before %d slices)\n", stages[s],
				       2 + 4 * k);
				break;
			}
			printf("  %-18s %10.3f %10.1f %10.1f\n", stages[s], at, lw * 1e3, lc * 1e3);
			fflush(stdout);
		}
	pb_part_problem_free(P);
	pb_graph_free(g);
	pb_hw_free(hw);
	return 0;
}
