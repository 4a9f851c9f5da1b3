/*
 * bench_partition_rl.c — quality of the REINFORCE agent and the baselines
 * against the exact optimum.
 *
 *   bench_partition_rl SECONDS SEED LAYOUT[,LAYOUT...] MODEL...
 *
 * For every layout and model: the exact optimum; the ratio max(t)/optimum of
 * equal, greedy, local search and pack (with pack's CPU time); the ratio of
 * the agent's best state before any episode (the better of greedy and pack,
 * each polished by the local search: reinforce.h) and the CPU time of that
 * setup; then the agent trains on one core for at
 * most SECONDS (checked between episodes) and the bench prints the ratio of
 * its best partition, the episodes run, episodes per second, and the
 * training time at which the best came within 2% of the optimum. All times
 * are CPU seconds of the one thread (fair on a shared machine).
 * One markdown table row per (model, layout). PB_RL_STEPS, PB_RL_RESTART,
 * PB_RL_WINDOW (cfg.window), PB_RL_PWIN (cfg.restart_window), PB_RL_SPLIT
 * (cfg.split), PB_RL_RETIME (cfg.retime), PB_RL_INIT (greedy|equal|local: cfg.init; greedy
 * starts the best from greedy alone, without pack), PB_RL_HIDDEN and PB_RL_LR override the agent's
 * defaults (reinforce.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/graph.h"
#include "load.h"
#include "hw.h"
#include "partition/baselines.h"
#include "partition/exact.h"
#include "partition/chain_problem.h"
#include "partition/rl_reinforce.h"

/* CPU time of this (single) thread: the training budget is "on one core". */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double ratio(pb_part_problem *P, const int *ac, double opt)
{
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, NULL);
	return ev.max_time / opt;
}

/* The environment's overrides of the agent's defaults (file comment). */
static double env_num(const char *name, double dflt)
{
	const char *v = getenv(name);
	return v ? atof(v) : dflt;
}

static void env_overrides(pb_rl_config *c)
{
	c->step_limit = (int)env_num("PB_RL_STEPS", c->step_limit);
	c->restart_best = env_num("PB_RL_RESTART", c->restart_best);
	c->window = (int)env_num("PB_RL_WINDOW", c->window);
	c->restart_window = env_num("PB_RL_PWIN", c->restart_window);
	c->split = env_num("PB_RL_SPLIT", c->split);
	c->retime = env_num("PB_RL_RETIME", c->retime);
	c->hidden = (int)env_num("PB_RL_HIDDEN", c->hidden);
	c->lr = env_num("PB_RL_LR", c->lr);
	const char *in = getenv("PB_RL_INIT"); /* greedy | equal | local; else balanced */
	if (in)
		c->init = strcmp(in, "greedy") == 0  ? PB_RL_INIT_GREEDY
		          : strcmp(in, "equal") == 0 ? PB_RL_INIT_EQUAL
		          : strcmp(in, "local") == 0 ? PB_RL_INIT_LOCAL
		                                     : PB_RL_INIT_BALANCED;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: %s SECONDS SEED LAYOUT[,LAYOUT...] MODEL...\n", argv[0]);
		return 1;
	}
	double seconds = atof(argv[1]);
	unsigned long seed = strtoul(argv[2], NULL, 10);
	char *layouts = strdup(argv[3]);
	printf("| model | layout | layers | exact (ms) | exact time (s) | equal | greedy | local | "
	       "pack | pack time (s) | rl start | rl setup (s) | rl | rl episodes | episodes/s | "
	       "rl time to 2%% (s) |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	fflush(stdout);
	for (int i = 4; i < argc; i++) {
		pb_error err = {0};
		pb_graph *g;
		if (pb_graph_load(argv[i], NULL, &g, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 2;
		}
		char *save = NULL, *lay_list = strdup(layouts);
		for (char *lay = strtok_r(lay_list, ",", &save); lay;
		     lay = strtok_r(NULL, ",", &save)) {
			pb_hw *hw;
			pb_manycore mc;
			pb_part_problem *P;
			if (pb_hw_load(lay, &hw, &err) || pb_manycore_parse(hw, &mc, &err) ||
			    pb_part_problem_new(g, &mc, &P, &err)) {
				fprintf(stderr, "%s\n", err.msg);
				return 2;
			}
			int n = P->n, *ac = malloc((size_t)n * sizeof *ac);
			double opt, t0 = now();
			pb_part_exact_solve(P, &opt, NULL, NULL, &err);
			double t_exact = now() - t0;
			pb_part_equal(P, ac);
			double r_eq = ratio(P, ac, opt);
			pb_part_greedy(P, ac);
			double r_gr = ratio(P, ac, opt);
			pb_part_local_search(P, ac, 1 << 30);
			double r_lo = ratio(P, ac, opt);
			double t_pack0 = now();
			pb_part_pack(P, ac);
			double t_pack = now() - t_pack0, r_pk = ratio(P, ac, opt);
			pb_rl_config c;
			pb_rl_config_default(&c);
			c.episodes = 100000000;
			c.seconds = seconds;
			c.seed = seed;
			c.optimum = opt;
			env_overrides(&c);
			pb_rl_trainer *T;
			double t_new0 = now();
			if (pb_rl_trainer_new(P, &c, NULL, &T, &err)) {
				fprintf(stderr, "%s\n", err.msg);
				return 2;
			}
			double t_start = now(), t_2pct = NAN, t_new = t_start - t_new0;
			double r_start = pb_rl_trainer_best_time(T) / opt;
			if (pb_rl_trainer_best_time(T) <= 1.02 * opt)
				t_2pct = 0;
			while (!pb_rl_trainer_done(T)) {
				if (pb_rl_trainer_step(T, 1, &err)) {
					fprintf(stderr, "%s\n", err.msg);
					return 2;
				}
				if (isnan(t_2pct) && pb_rl_trainer_best_time(T) <= 1.02 * opt)
					t_2pct = now() - t_start;
			}
			double el = now() - t_start;
			long ep = pb_rl_trainer_episodes(T);
			double r_rl = pb_rl_trainer_best_time(T) / opt;
			char t2[32];
			if (isnan(t_2pct))
				snprintf(t2, sizeof t2, "not reached");
			else
				snprintf(t2, sizeof t2, "%.2f", t_2pct);
			const char *base = strrchr(g->path, '/');
			printf("| %s | %s | %d | %.5f | %.2f | %.4f | %.4f | %.4f | %.4f | %.2f | "
			       "%.4f | "
			       "%.2f | %.4f | %ld | %.0f | %s |\n",
			       base ? base + 1 : g->path, mc.name, P->m, opt * 1e3, t_exact, r_eq,
			       r_gr, r_lo, r_pk, t_pack, r_start, t_new, r_rl, ep, ep / el, t2);
			fflush(stdout);
			pb_rl_trainer_free(T);
			free(ac);
			pb_part_problem_free(P);
			pb_hw_free(hw);
		}
		free(lay_list);
		pb_graph_free(g);
	}
	free(layouts);
	return 0;
}
