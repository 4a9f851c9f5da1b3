/*
 * bench_partition_rl.c — what the REINFORCE agent adds, blind to the optimum:
 * the shipped agent vs a fresh agent vs pack vs the exact optimum, and a
 * leave-one-out test of one policy on a model it was not trained on.
 *
 *   bench_partition_rl [--no-fresh|--fresh-only|--frozen] [--first-seed S] [--agent CKPT]
 *                      [--seed-log FILE] [--only M1,M2,...] EPISODES SEEDS LOO_EPISODES
 *                      LAYOUT[,LAYOUT...] MODEL...
 *
 * For every layout and model: the exact optimum (for the report only; no
 * agent sees it); pack's max(t) / optimum; then, from the equal split
 * (--init equal) and for seeds S..S+SEEDS-1 (S = --first-seed, default 1; more
 * seeds on a row whose verdict is within the seed-to-seed spread), EPISODES episodes of
 *   fresh    — a new network;
 *   shipped  — the layout's shipped agent, agents/STEM.ckpt beside the
 *              layout's folder (pb_partition_default_agent), when there is one;
 *   loo      — a network trained for LOO_EPISODES episodes (interleaved, seed
 *              1, from the equal split) on the other models of the list only
 *              (0: skip);
 * each with its best max(t) / optimum (mean over the seeds, and the worst),
 * and the episode at which it first beat its start (mean; "never" when a
 * seed never did); the anytime curve (mean best ratio after 10 and 100
 * episodes and at the end) with the mean episode at which the final best was
 * first reached (0: before any episode) and the run gap (the primal
 * integral of Berthold 2013 over episodes instead of seconds: the mean over
 * the run's episodes of the primal gap (x - opt) / x of the plan x held
 * while the episode runs, the first episode holding the start, or a loaded
 * agent's rollout plan once its rollout's steps are spent); and shipped (loo) vs fresh:
 * "better" when its mean final ratio is lower to 4 digits, or, equal to 4
 * digits, when its mean run gap is lower ("run gap"), with the paired
 * difference of the run gaps over the same seeds and its standard error.
 * (Before the twelfth run of RESULTS.md the tie-break was the mean episode
 * at which the final best was reached, a last-event figure whose seeds
 * spread from 13 to 951 episodes on one row; in the twelfth run it was the
 * old run gap, the mean of best / opt - 1 after each episode, which left
 * out the first episode and is still logged and printed beside the new.) Episodes are
 * the agent's default ones (cfg.rollouts rollouts, one update each); the
 * first line says how many. All times are CPU seconds of the one thread.
 * One markdown table row per (model, layout), with the mean CPU seconds of
 * the shipped agent's EPISODES episodes. --no-fresh skips the fresh agent,
 * --fresh-only the shipped and loo ones; --frozen runs, in the fresh column
 * alone, a fresh network with learning rate 0 (labelled "frozen" in the seed
 * log): a policy that never learns, so that what the restarts find without
 * any learning can be told from what the network learns. --agent CKPT runs CKPT in the shipped
 * column instead of the layout's shipped agent (a candidate checkpoint);
 * --seed-log FILE appends one line per run and seed, "layout model agent seed
 * ratio final-best-episode run-gap old-run-gap" (agent: fresh, shipped, loo
 * or frozen), so that
 * runs with other seeds can be pooled (bench/rl_pool.py). --only runs the
 * rows of the models whose file names (e.g. swin_t.onnx) are listed; the loo
 * agents still train on every other model given, so one table can be run as
 * several processes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model/graph.h"
#include "load.h"
#include "hw.h"
#include "partition/chain/baselines.h"
#include "partition/chain/exact.h"
#include "partition/chain/chain_problem.h"
#include "partition/methods/partition.h"
#include "partition/rl/rl_reinforce.h"

enum { MAX_MODELS = 32, MAX_SEEDS = 1000 };

/* Checkpoints of the anytime curve: the best ratio after this many episodes. */
static const long anytime_at[] = {10, 100};
enum { N_ANY = (int)(sizeof anytime_at / sizeof *anytime_at) };

typedef struct result {
	double mean, worst, beat; /* ratio to the optimum; mean first-beat episode */
	int never;                /* seeds that never beat the start */
	double seconds;           /* mean CPU seconds of the episodes */
	double any[N_ANY];        /* mean best ratio after anytime_at[k] episodes */
	double to_best;           /* mean episode at which the final best was first reached */
	double run_gap;           /* mean over the seeds of the run gap (verdict()) */
	double *gaps;             /* each seed's run gap, for the paired verdict */
	double run_gap1, *gaps1;  /* the same without the first episode (the old sum) */
} result;

static void die(const pb_error *err)
{
	fprintf(stderr, "%s\n", err->msg);
	exit(2);
}

static void config(pb_rl_config *c, long episodes, unsigned long seed)
{
	pb_rl_config_default(c);
	c->episodes = episodes;
	c->seed = seed;
	c->init = PB_RL_INIT_EQUAL;
}

/* The first seed of every agent's runs (--first-seed). */
static int first_seed = 1;
/* --seed-log: one line per run and seed; the row's labels for it. */
static FILE *seed_log;
static const char *log_layout = "", *log_model = "";

/* Berthold's primal gap of a plan of max(t) x: (x - opt) / x, in [0, 1);
 * near the optimum it is x / opt - 1, and a plan 14 times the optimum (the
 * equal split on 64 cores) counts 0.93, not 13. */
static double primal_gap(double x, double opt)
{
	return x > opt ? (x - opt) / x : 0;
}

/* The primal gap held during the first episode. A fresh agent holds its
 * start; a loaded agent holds its start while its rollout (s0 policy steps,
 * before episode 1) runs and then the rollout's plan b0: the rollout is
 * charged s0 / s1 of the episode, s1 the first episode's own steps. */
static double run_gap_first(double start, double b0, long s0, long s1, double opt)
{
	double f = s0 <= 0 ? 0 : s1 > s0 ? (double)s0 / (double)s1 : 1;
	return f * primal_gap(start, opt) + (1 - f) * primal_gap(b0, opt);
}

/* EPISODES episodes from the equal split with the agent (NULL: fresh), per seed. */
static result run(pb_part_problem *P, const char *agent, const char *label, long episodes,
                  int seeds, double opt)
{
	result r;
	memset(&r, 0, sizeof r);
	r.gaps = calloc((size_t)seeds, sizeof *r.gaps);
	r.gaps1 = calloc((size_t)seeds, sizeof *r.gaps1);
	if (!r.gaps || !r.gaps1) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	int beat_n = 0;
	for (int s = first_seed; s < first_seed + seeds; s++) {
		pb_rl_config c;
		config(&c, episodes, (unsigned long)s);
		/* frozen: a fresh network that never learns (what the restarts do alone) */
		if (strcmp(label, "frozen") == 0)
			c.lr = 0;
		pb_rl_trainer *T;
		pb_error err = {0};
		if (pb_rl_trainer_new(P, &c, agent, &T, &err))
			die(&err);
		/* One episode at a time: the anytime curve, the episode at which
		 * the best reached its final value (0: before any episode) and the
		 * run gap: the mean over the run's episodes of the primal gap of
		 * the plan the agent holds while it runs that episode (the best
		 * before it; run_gap_first for the first), and the old run gap: the
		 * mean of best / opt - 1 after each episode. */
		pb_rl_report rep;
		pb_rl_trainer_report(T, &rep);
		double best = pb_rl_trainer_best_time(T), start = rep.start_time, b0 = best;
		double run_gap = 0, run_gap1 = 0;
		long last_gain = 0, s0 = pb_rl_trainer_steps(T), s1 = 0;
		for (long e = 1; e <= episodes; e++) {
			double held = pb_rl_trainer_best_time(T); /* held during episode e */
			if (pb_rl_trainer_step(T, 1, &err))
				die(&err);
			if (e == 1)
				s1 = pb_rl_trainer_steps(T) - s0;
			double b = pb_rl_trainer_best_time(T);
			if (b < best * (1 - 1e-12))
				best = b, last_gain = e;
			if (e > 1)
				run_gap += primal_gap(held, opt) / (double)episodes;
			run_gap1 += (b / opt - 1) / (double)episodes;
			for (int k = 0; k < N_ANY; k++)
				if (e == anytime_at[k] ||
				    (e == episodes && episodes < anytime_at[k]))
					r.any[k] += b / opt / seeds;
		}
		run_gap += run_gap_first(start, b0, s0, s1, opt) / (double)episodes;
		r.to_best += (double)last_gain / seeds;
		r.run_gap += run_gap / seeds;
		r.gaps[s - first_seed] = run_gap;
		r.run_gap1 += run_gap1 / seeds;
		r.gaps1[s - first_seed] = run_gap1;
		pb_rl_trainer_report(T, &rep);
		double ratio = rep.best_time / opt;
		if (seed_log) {
			fprintf(seed_log, "%s %s %s %d %.6f %ld %.9g %.9g\n", log_layout, log_model,
			        label, s, ratio, last_gain, run_gap, run_gap1);
			fflush(seed_log);
		}
		r.mean += ratio / seeds;
		r.worst = fmax(r.worst, ratio);
		r.seconds += rep.seconds / seeds;
		if (rep.beat_episode < 0)
			r.never++;
		else
			r.beat += (double)rep.beat_episode, beat_n++;
		pb_rl_trainer_free(T);
	}
	r.beat = beat_n ? r.beat / beat_n : NAN;
	return r;
}

/* Is name one of the comma-separated names of list? */
static int listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && strncmp(p, name, n) == 0)
			return 1;
		p += len + (e != NULL);
	}
	return 0;
}

/* "Better" (RESULTS.md, docs/partition.md): a lower mean final ratio (to 4
 * digits, as printed), or at an equal one a lower mean run gap (run(); old:
 * the old run gap) with the paired (same seeds) difference of the run gaps
 * and its standard error, so a reader sees whether the seeds decide it. */
static const char *paired(const result *a, const result *b, int seeds, int old, double *d,
                          double *se)
{
	const double *ga = old ? a->gaps1 : a->gaps, *gb = old ? b->gaps1 : b->gaps;
	double ss = 0;
	*d = old ? a->run_gap1 - b->run_gap1 : a->run_gap - b->run_gap;
	for (int s = 0; s < seeds; s++) {
		double x = ga[s] - gb[s] - *d;
		ss += x * x;
	}
	*se = seeds > 1 ? sqrt(ss / (seeds - 1) / seeds) : NAN;
	long ra = lround(a->mean * 1e4), rb = lround(b->mean * 1e4);
	return ra != rb  ? (ra < rb ? "better" : "worse")
	       : *d != 0 ? (*d < 0 ? "better (run gap)" : "worse (run gap)")
	                 : "tie";
}

static void verdict(char *buf, size_t len, const result *a, const result *b, int seeds)
{
	double d, se, d1, se1;
	const char *v = paired(a, b, seeds, 0, &d, &se), *v1 = paired(a, b, seeds, 1, &d1, &se1);
	snprintf(buf, len, "%s; run gap %+.4f%% ± %.4f (old sum: %s, %+.4f%% ± %.4f)", v, 100 * d,
	         100 * se, v1, 100 * d1, 100 * se1);
}

/* One network trained on every problem but `skip`, episodes interleaved. */
static void train_loo(pb_part_problem **Ps, int n, int skip, long episodes, const char *path)
{
	pb_rl_trainer *T[MAX_MODELS] = {0};
	int k = 0, ids[MAX_MODELS];
	pb_error err = {0};
	for (int i = 0; i < n; i++) {
		if (i == skip)
			continue;
		pb_rl_config c;
		config(&c, 1L << 40, (unsigned long)(1 + k));
		c.reset = 0; /* as partbench train */
		if (pb_rl_trainer_new(Ps[i], &c, NULL, &T[k], &err) ||
		    (k > 0 && pb_rl_trainer_share(T[k], T[0], &err)))
			die(&err);
		ids[k++] = i;
	}
	(void)ids;
	for (long e = 0; e < episodes; e++)
		if (pb_rl_trainer_step(T[e % k], 1, &err))
			die(&err);
	if (pb_rl_trainer_save(T[0], path, &err))
		die(&err);
	for (int i = k - 1; i >= 0; i--)
		pb_rl_trainer_free(T[i]);
}

static void cell(char *buf, size_t len, const result *r)
{
	snprintf(buf, len, "%.4f (%.4f)", r->mean, r->worst);
}

/* The anytime curve: best after 10 / 100 episodes, final, the mean
 * episode at which the final best was reached, and the run gap (%). */
static void curve_cell(char *buf, size_t len, const result *r)
{
	snprintf(buf, len, "%.4f / %.4f / %.4f @ %.0f; %.4f%%", r->any[0], r->any[1], r->mean,
	         r->to_best, 100 * r->run_gap);
}

static void beat_cell(char *buf, size_t len, const result *r)
{
	if (r->never)
		snprintf(buf, len, "%.1f, %d never", r->beat, r->never);
	else
		snprintf(buf, len, "%.1f", r->beat);
}

int main(int argc, char **argv)
{
	/* --fresh-only: only the fresh agent. --no-fresh: skip the fresh agent (its column then
	 * reads "—"; its runs do not depend on the loaded agents' settings, so an earlier run's
	 * column can stand beside it). */
	int no_fresh = 0, fresh_only = 0, frozen = 0;
	const char *agent_opt = NULL, *only = NULL;
	while (argc > 1 && strncmp(argv[1], "--", 2) == 0) {
		int two = argc > 2; /* the option has its value */
		if (strcmp(argv[1], "--no-fresh") == 0) {
			no_fresh = 1;
		} else if (strcmp(argv[1], "--fresh-only") == 0) {
			fresh_only = 1;
		} else if (strcmp(argv[1], "--frozen") == 0) {
			fresh_only = frozen = 1;
		} else if (strcmp(argv[1], "--first-seed") == 0 && two) {
			first_seed = atoi(argv[2]);
			if (first_seed < 1) {
				fprintf(stderr, "%s: --first-seed must be >= 1\n", argv[0]);
				return 1;
			}
		} else if (strcmp(argv[1], "--only") == 0 && two) {
			only = argv[2];
		} else if (strcmp(argv[1], "--agent") == 0 && two) {
			agent_opt = argv[2];
		} else if (strcmp(argv[1], "--seed-log") == 0 && two) {
			if (!(seed_log = fopen(argv[2], "a"))) {
				perror(argv[2]);
				return 1;
			}
		} else {
			fprintf(stderr, "%s: unknown option %s\n", argv[0], argv[1]);
			return 1;
		}
		int used = strcmp(argv[1], "--no-fresh") == 0 ||
		                   strcmp(argv[1], "--fresh-only") == 0 ||
		                   strcmp(argv[1], "--frozen") == 0
		               ? 1
		               : 2;
		argv[used] = argv[0];
		argv += used, argc -= used;
	}
	if (argc < 6 || argc - 5 > MAX_MODELS) {
		fprintf(
		    stderr,
		    "usage: %s [--no-fresh|--fresh-only|--frozen] [--first-seed S] [--agent CKPT] "
		    "[--seed-log FILE] [--only M1,M2,...] EPISODES SEEDS "
		    "LOO_EPISODES LAYOUT[,LAYOUT...] "
		    "MODEL... (at most "
		    "%d models)\n",
		    argv[0], MAX_MODELS);
		return 1;
	}
	long episodes = atol(argv[1]), loo_eps = atol(argv[3]);
	int seeds = atoi(argv[2]), n = argc - 5;
	if (episodes < 1 || seeds < 1 || seeds > MAX_SEEDS || loo_eps < 0) {
		fprintf(stderr, "%s: EPISODES >= 1, SEEDS 1-%d, LOO_EPISODES >= 0\n", argv[0],
		        MAX_SEEDS);
		return 1;
	}
	pb_graph *g[MAX_MODELS];
	for (int i = 0; i < n; i++) {
		pb_error err = {0};
		if (pb_graph_load(argv[5 + i], NULL, &g[i], &err))
			die(&err);
	}
	pb_rl_config dflt;
	config(&dflt, episodes, 1);
	printf("%d rollouts per episode, %d hidden units, seeds %d-%d%s\n\n", dflt.rollouts,
	       dflt.hidden, first_seed, first_seed + seeds - 1,
	       frozen ? "; the fresh column is a frozen network (learning rate 0)" : "");
	printf(
	    "| model | layout | layers | exact (ms) | pack | fresh | fresh beat-start ep | shipped "
	    "| shipped beat-start ep | shipped s | loo | loo beat-start ep | fresh 10/100/%ld @ "
	    "final-best ep; run gap | shipped 10/100/%ld @ ep; run gap | loo 10/100/%ld @ ep; "
	    "run gap | shipped vs fresh | loo vs fresh |\n",
	    episodes, episodes, episodes);
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	fflush(stdout);
	char *lay_list = strdup(argv[4]), *save = NULL;
	for (char *lay = strtok_r(lay_list, ",", &save); lay; lay = strtok_r(NULL, ",", &save)) {
		pb_error err = {0};
		pb_hw *hw;
		pb_manycore mc;
		if (pb_hw_load(lay, &hw, &err) || pb_manycore_parse(hw, &mc, &err))
			die(&err);
		pb_part_problem *P[MAX_MODELS];
		for (int i = 0; i < n; i++)
			if (pb_part_problem_new(g[i], &mc, &P[i], &err))
				die(&err);
		char shipped[1024];
		int has_shipped = !fresh_only && pb_partition_default_agent(lay, mc.cores, shipped,
		                                                            sizeof shipped);
		if (agent_opt && !fresh_only) {
			snprintf(shipped, sizeof shipped, "%s", agent_opt);
			has_shipped = 1;
		}
		log_layout = mc.name;
		for (int i = 0; i < n; i++) {
			int *ac = malloc((size_t)mc.cores * sizeof *ac);
			double opt;
			if (pb_part_exact_solve(P[i], &opt, NULL, NULL, &err))
				die(&err);
			pb_part_eval ev;
			pb_part_pack(P[i], ac);
			pb_part_evaluate(P[i], ac, &ev, NULL);
			double r_pack = ev.max_time / opt;
			const char *base = strrchr(g[i]->path, '/');
			log_model = base ? base + 1 : g[i]->path;
			if (only && !listed(only, log_model)) {
				free(ac);
				continue;
			}
			result fresh = {0}, ship = {0}, loo = {0};
			if (!no_fresh)
				fresh = run(P[i], NULL, frozen ? "frozen" : "fresh", episodes,
				            seeds, opt);
			char c_f[48], c_s[48] = "—", c_l[48] = "—", b_f[48], b_s[48] = "—",
			              b_l[48] = "—", a_f[80], a_s[80] = "—", a_l[80] = "—",
			              v_s[160] = "—", v_l[160] = "—";
			cell(c_f, sizeof c_f, &fresh);
			beat_cell(b_f, sizeof b_f, &fresh);
			curve_cell(a_f, sizeof a_f, &fresh);
			if (no_fresh)
				strcpy(c_f, "—"), strcpy(b_f, "—"), strcpy(a_f, "—");
			if (has_shipped) {
				ship = run(P[i], shipped, "shipped", episodes, seeds, opt);
				cell(c_s, sizeof c_s, &ship);
				beat_cell(b_s, sizeof b_s, &ship);
				curve_cell(a_s, sizeof a_s, &ship);
				if (!no_fresh)
					verdict(v_s, sizeof v_s, &ship, &fresh, seeds);
			}
			if (loo_eps > 0 && n > 1 && !fresh_only) {
				char path[64];
				snprintf(path, sizeof path, "/tmp/bench_rl_loo_%d.ckpt",
				         (int)getpid());
				train_loo(P, n, i, loo_eps, path);
				loo = run(P[i], path, "loo", episodes, seeds, opt);
				remove(path);
				cell(c_l, sizeof c_l, &loo);
				beat_cell(b_l, sizeof b_l, &loo);
				curve_cell(a_l, sizeof a_l, &loo);
				if (!no_fresh)
					verdict(v_l, sizeof v_l, &loo, &fresh, seeds);
			}
			printf("| %s | %s | %d | %.5f | %.4f | %s | %s | %s | %s | %.2f | %s | %s "
			       "| %s | "
			       "%s | %s | %s | %s |\n",
			       base ? base + 1 : g[i]->path, mc.name, P[i]->m, opt * 1e3, r_pack,
			       c_f, b_f, c_s, b_s, ship.seconds, c_l, b_l, a_f, a_s, a_l, v_s, v_l);
			fflush(stdout);
			free(fresh.gaps);
			free(ship.gaps);
			free(loo.gaps);
			free(fresh.gaps1);
			free(ship.gaps1);
			free(loo.gaps1);
			free(ac);
		}
		for (int i = 0; i < n; i++)
			pb_part_problem_free(P[i]);
		pb_hw_free(hw);
	}
	free(lay_list);
	for (int i = 0; i < n; i++)
		pb_graph_free(g[i]);
	return 0;
}
