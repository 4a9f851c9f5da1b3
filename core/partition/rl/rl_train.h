/*
 * partition/rl/rl_train.h — a training run of the REINFORCE partition agent
 * over one or several models (rl_train.c): the models' problems, one
 * network shared by their trainers, episodes interleaved across the models
 * under a budget counted over all of them, and ranks of an MPI job stopping
 * together. The `train` command (cmds/cmd_partition.c) parses, calls these
 * and prints; the optimum of each model is for the report only (the agent
 * never reads it).
 */
#ifndef PB_PARTITION_RL_TRAIN_H
#define PB_PARTITION_RL_TRAIN_H

#include "hw.h"
#include "model/graph.h"
#include "partition/chain/chain_problem.h"
#include "partition/rl/rl_reinforce.h"
#include "util/error.h"

/* One model of a run: its problem, its trainer (all share the first one's
 * network), the optimum for the report (NAN: not computed). */
typedef struct pb_rl_train_model {
	const char *path;
	pb_graph *g; /* loaded by pb_rl_train_open (NULL: the caller's graph) */
	pb_part_problem *P;
	pb_rl_trainer *T;
	double opt;
} pb_rl_train_model;

/* The problem of tm (graph g, or tm->path loaded when g is NULL) on the
 * many-core layout hw, with kernel times from the tuning log `costs` (NULL:
 * MACs / rate) and, unless no_ref, the exact optimum for the report. */
int pb_rl_train_open(pb_rl_train_model *tm, const pb_graph *g, const pb_hw *hw, const char *costs,
                     int no_ref, pb_error *err);
/* The trainers of n models: model k gets cfg with seed + k, the first one
 * the checkpoint `agent` (NULL: a fresh network) and cfg's log; the others
 * share its network. cfg's episode and time caps are not the trainers'
 * (they run uncapped): the run's budget is pb_rl_train_loop's. */
int pb_rl_train_start(pb_rl_train_model *tm, int n, const pb_rl_config *cfg, const char *agent,
                      pb_error *err);
void pb_rl_train_free(pb_rl_train_model *tm, int n);

/* Called every 16 episodes and at the end with the fraction of the budget
 * used; returns non-zero to cancel the run. */
typedef int (*pb_rl_train_tick)(void *ud, double fraction, long episodes, double seconds);

/* A run's budget (0: no cap on that count) and what it used. */
typedef struct pb_rl_train_run {
	long cap_episodes;
	double cap_seconds; /* CPU seconds of the trainers */
	long episodes;
	double seconds;
	int cancelled;
	int rank_lost; /* a collective failed: another rank died or stopped answering */
} pb_rl_train_run;

/* Episodes one at a time, interleaved across the n models, until the
 * budget is used, tick cancels, *failed (a script hook's failure flag; may
 * be NULL) is set or a step fails. With several MPI ranks the ranks stop
 * together (a cancel on rank 0 too). */
int pb_rl_train_loop(pb_rl_train_model *tm, int n, pb_rl_train_run *run, const int *failed,
                     pb_rl_train_tick tick, void *ud, pb_error *err);
/* After a run that failed because a rank was lost (run->rank_lost): saves
 * the network as of the last gradient step every rank took to `path` and
 * adds to err's message that it did (issue 39: what was done is kept).
 * Does nothing on other failures or when the save fails. */
void pb_rl_train_keep(const pb_rl_train_model *tm, const pb_rl_train_run *run, const char *path,
                      pb_error *err);

#endif
