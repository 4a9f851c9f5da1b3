/*
 * partition/rl/rl_train.c — a training run of the partition agent over one or
 * several models (rl_train.h): open the models, start trainers sharing one
 * network, interleave episodes under a budget counted over all models.
 * Moved out of the `train` command so the command only parses and prints.
 */
#include "partition/rl/rl_train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "partition/chain/exact.h"
#include "partition/chain/manycore.h"
#include "partition/chain/part_costs.h"
#include "util/ranks.h"

int pb_rl_train_open(pb_rl_train_model *tm, const pb_graph *g, const pb_hw *hw, const char *costs,
                     int no_ref, pb_error *err)
{
	pb_manycore mc;
	int rc = pb_manycore_parse(hw, &mc, err);
	if (rc)
		return rc;
	if (!g) {
		if ((rc = pb_graph_load(tm->path, NULL, &tm->g, err)))
			return rc;
		g = tm->g;
	}
	double *times = NULL;
	int found;
	if (costs && (rc = pb_part_load_costs(g, costs, &times, &found, err)))
		return rc;
	rc = pb_part_problem_new_timed(g, &mc, times, &tm->P, err);
	free(times);
	tm->opt = NAN;
	if (!rc && !no_ref)
		rc = pb_part_exact_solve(tm->P, &tm->opt, NULL, NULL, err);
	return rc;
}

int pb_rl_train_start(pb_rl_train_model *tm, int n, const pb_rl_config *cfg, const char *agent,
                      pb_error *err)
{
	int rc = PB_OK;
	for (int k = 0; k < n && !rc; k++) {
		pb_rl_config c = *cfg;
		c.episodes = 1L << 40;
		c.seconds = 0;
		c.seed = cfg->seed + (unsigned long)k;
		c.log = k == 0 ? cfg->log : NULL;
		c.log_optimum = tm[k].opt; /* for the plot only */
		rc = pb_rl_trainer_new(tm[k].P, &c, k == 0 ? agent : NULL, &tm[k].T, err);
		if (!rc && k > 0)
			rc = pb_rl_trainer_share(tm[k].T, tm[0].T, err);
	}
	return rc;
}

void pb_rl_train_free(pb_rl_train_model *tm, int n)
{
	for (int k = n - 1; k >= 0; k--) { /* the first one owns the shared network */
		pb_rl_trainer_free(tm[k].T);
		pb_part_problem_free(tm[k].P);
		pb_graph_free(tm[k].g);
	}
}

/* The fraction of the budget used: the larger of episodes and CPU time. */
static double train_fraction(const pb_rl_train_run *run)
{
	double f = run->cap_episodes > 0 ? (double)run->episodes / (double)run->cap_episodes : 0;
	if (run->cap_seconds > 0 && run->seconds / run->cap_seconds > f)
		f = run->seconds / run->cap_seconds;
	return f;
}

int pb_rl_train_loop(pb_rl_train_model *tm, int n, pb_rl_train_run *run, const int *failed,
                     pb_rl_train_tick tick, void *ud, pb_error *err)
{
	int rc = PB_OK;
	while (!rc) {
		int k = (int)(run->episodes % n); /* one episode of each model in turn */
		pb_rl_report r0, r1;
		pb_rl_trainer_report(tm[k].T, &r0);
		if ((rc = pb_rl_trainer_step(tm[k].T, 1, err)) || (failed && *failed))
			break;
		pb_rl_trainer_report(tm[k].T, &r1);
		run->seconds += r1.seconds - r0.seconds;
		run->episodes++;
		double f = train_fraction(run);
		int cancel = (run->episodes % 16 == 0 || f >= 1) && tick &&
		             tick(ud, f > 1 ? 1 : f, run->episodes, run->seconds);
		if (pb_ranks_size() > 1) { /* the ranks stop together (rank 0's cancel too) */
			double stop = f >= 1 || cancel;
			if (pb_ranks_sum(&stop, 1, err)) {
				rc = err->code;
				run->rank_lost = 1;
				break;
			}
			f = stop > 0 ? 1 : f;
		}
		if (cancel) {
			run->cancelled = 1;
			break;
		}
		if (f >= 1)
			break;
	}
	return rc;
}

void pb_rl_train_keep(const pb_rl_train_model *tm, const pb_rl_train_run *run, const char *path,
                      pb_error *err)
{
	/* a failed gradient sum takes no step (rl_reinforce.c): the network is
	 * the one every rank held after the last sum that completed */
	pb_error e = {0};
	if (!run->rank_lost || !path || pb_rl_trainer_save(tm[0].T, path, &e) != PB_OK)
		return;
	size_t n = strlen(err->msg);
	snprintf(err->msg + n, sizeof err->msg - n,
	         "; the agent after %ld episodes was saved to %s (train it further with --agent)",
	         run->episodes, path);
}
