/*
 * partition/mesh/rl_place.h — the agent's placement actions on a routed mesh and
 * their REINFORCE training (docs/mesh.md, "The agent's placement actions").
 *
 * On a layout with a routed mesh the agent's 1-D actions (env.h) choose the
 * layer groups and their core counts; its placement actions then move the
 * groups' regions on the grid, priced by the routed model (mesh_cost.h).
 * Action k = type * n + c acts on core c (cores numbered row by row) and its
 * neighbour in direction d = type mod 4 (PB_MESH_E, W, S, N):
 *   move (types 0-3): core c leaves its group for the neighbour's group;
 *        valid when the neighbour exists and is in another group and c's
 *        group keeps a core and stays one connected region (the receiver
 *        stays connected: c touches it);
 *   swap (types 4-7): the groups of c and of its neighbour exchange their
 *        regions (valid when the neighbour is in another group).
 * Every valid action keeps a valid placement: every core in one group, each
 * group one non-empty 4-connected region. Invalid actions are masked.
 *
 * The policy (rl_policy.h) is shared by the n cores: RLP_FEATURES inputs of
 * each core (its group's time / max(t), bottleneck flag, size, network
 * share, its row and column, and for each direction whether the neighbour
 * exists and is in another group, that group's time / max(t) and bottleneck
 * flag, and the load of the link towards it / the most loaded link's, the
 * episode's progress) and 8 logits per core. Episode: from the start
 * placement (the snake of the agent's groups) or, half of the time, from the
 * best placement so far, `steps` actions; reward per step: the decrease of
 * the objective over the start's; discounted returns minus a moving
 * baseline per step index, normalised; entropy bonus; Adam. The best
 * placement seen (pb_mesh_cost_better: rule violations, objective, sum of
 * squared times) is kept. The agent reads only the routed model's figures
 * of its own placements: never the MILP's, the enumeration's or the exact
 * 1-D optimum. Deterministic for a seed; the CPU-time budget is checked
 * between episodes, C->stop (a cancel) too.
 */
#ifndef PB_RL_PLACE_H
#define PB_RL_PLACE_H

#include "util/error.h"
#include "partition/mesh/mesh_cost.h"
#include "partition/rl/rl_policy.h"

enum { PB_RL_PLACE_TYPES = 8 };

/* Actions of a mesh of n cores: 8n. */
int pb_rl_place_n_actions(int n);
/* 1 when action k is valid in placement owner (seen, queue: n ints). */
int pb_rl_place_valid(const pb_mesh_grid *g, const int *owner, int k, int *seen, int *queue);
/* Applies a valid action in place; returns 0 (owner unchanged) if invalid. */
int pb_rl_place_apply(const pb_mesh_grid *g, int *owner, int k, int *seen, int *queue);
/* Fills mask[8n]; returns the number of valid actions. */
int pb_rl_place_mask(const pb_mesh_grid *g, const int *owner, unsigned char *mask, int *seen,
                     int *queue);

typedef struct pb_rl_place_config {
	long episodes;  /* most episodes (default 300; 0: only the budget) */
	double seconds; /* CPU-time budget (0: none) */
	int steps;      /* actions per episode (default 24) */
	int hidden;     /* hidden units of a new network (default 32) */
	double lr, gamma, entropy, clip;
	unsigned long seed; /* default 1 */
} pb_rl_place_config;

void pb_rl_place_config_default(pb_rl_place_config *c);

typedef struct pb_rl_place_stats {
	long episodes, steps, evals;
	double start, best; /* objective of the start and of the best placement */
	double seconds;     /* CPU seconds of training */
	long beat_episode;  /* first episode whose best beat the start (-1: never) */
	int stopped;        /* C->stop said so */
} pb_rl_place_stats;

/* A new placement network for n cores (seeded). */
pb_rl_policy *pb_rl_place_policy_new(int n, int hidden, unsigned long seed);
/* Trains pol (n cores, from pb_rl_place_policy_new or pb_rl_place_load) on
 * C's groups from placement owner (valid); owner and ev receive the best
 * placement seen. */
int pb_rl_place_train(pb_mesh_cost *C, pb_rl_policy *pol, const pb_rl_place_config *cfg, int *owner,
                      pb_mesh_eval *ev, pb_rl_place_stats *st, pb_error *err);

/* Trains one network on several problems (the `train` command's
 * --place-output): rounds of `chunk` episodes on each C[k] in turn, each
 * from its snake, until cfg->episodes per problem are done (or the CPU
 * budget cfg->seconds over all of them is used); Adam restarts with each
 * chunk. st[k]: the figures of problem k's last chunk, with its episodes
 * summed. */
int pb_rl_place_train_many(pb_mesh_cost **C, int n_problems, pb_rl_policy *pol,
                           const pb_rl_place_config *cfg, int chunk, pb_rl_place_stats *st,
                           pb_error *err);

/* Placement checkpoints: rl_checkpoint.c's format with 8 logits per core. */
int pb_rl_place_save(const pb_rl_policy *p, int cores, long episodes, const char *path,
                     pb_error *err);
int pb_rl_place_load(const char *path, int cores, pb_rl_policy **out, long *episodes,
                     pb_error *err);
/* The shipped placement agent of layout DIR/STEM.lua: DIR/../agents/
 * STEM.place.ckpt in buf when it exists and loads for `cores`; else 0. */
int pb_rl_place_default_agent(const char *layout_path, int cores, char *buf, int len);

#endif
