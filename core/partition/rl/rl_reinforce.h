/*
 * partition/rl/rl_reinforce.h — the REINFORCE agent of the method (core/partition/chain/env.h is
 * its environment).
 *
 * Episode: cfg.rollouts rollouts (8 by default) with the current policy,
 * then one update with the mean of their gradients. Rollout: start from the
 * initial allocation — by default n single-core
 * groups with balanced MACs, since no action can split a group, so episodes
 * must start with many groups and merge — or, with probability restart_best,
 * from the restart centre (the best state seen so far; when it has not
 * improved for `reset` episodes it becomes the start again, the best kept):
 * as it is or with its cores re-assigned
 * greedily (baselines.h), or (restart_window of these restarts) with a
 * window of 1 to `window` adjacent groups (around the bottleneck group half
 * of the time) broken up: into single-core groups, or (`split` of the
 * windows) into k groups, k drawn between the window's groups + 1 and its
 * cores, with random core counts; layers are cut where the running MACs
 * cross each part's share of cores, and then (`retime` of the windows) moved
 * so that the window's largest group time is smallest for those core counts
 * (pb_rl_retime_window: group times include routing, so MAC-balanced cuts
 * can sit where much data crosses), and their core counts hill-climbed one
 * core at a time, and their group count by splitting a group in two or
 * merging two (`tune` of those, `regroup`; pb_rl_tune_window). Such an
 * episode acts only on the core
 * pairs from the group before the window to the group after it (its focus;
 * the other pairs' actions are masked). The actions move a boundary between
 * two multi-core groups only through detours and never split a group
 * (except a single layer off a group's first core), so a multi-core group
 * can never give its last core to the next group: a broken-up window lets
 * the agent re-form those groups with other boundaries and core counts by
 * its own actions, and re-cut windows add the groups with uneven core
 * counts that the optima of 64-core chips have. The best state starts as the
 * start (cfg.init) and nothing else, so pb_rl_trainer_report() can say what
 * the agent added to it: the start's max(t), the agent's, and the episode
 * and CPU seconds at which the agent first beat its start.
 *
 * At each step the policy (policy.h, one network shared by the n-1 core
 * pairs) picks one of the 4(n-1) actions from features of the cores around
 * each pair (their groups' time relative to max(t), bottleneck flag, cores,
 * group end, arranged_core, arranged_macs, storage, routing share, the
 * neighbouring groups' times, the problem's lower bound / max(t), max(t)
 * relative to the agent's own best so far), the state changes, and the
 * reward -a*max(t)+b of the new state is recorded. The episode ends when
 * max(t) is within target_gap of the problem's lower bound (perfect balance,
 * chain_problem.h) or after step_limit steps. The agent is blind to the exact
 * optimum and to every plan it did not produce: nothing of the kind enters
 * its features, its stop rule or its best-so-far (the optimum is only ever
 * computed by the caller, for the report). Then
 * the policy is updated from all (s, a, r) of the episode: by default the
 * per-step difference of the method's reward r(s_{t+1}) - r(s_t) (shaped; the
 * sum over an episode is the method's reward gained), discounted returns,
 * minus a moving-average baseline per step index, normalised; loss
 * -A log pi(a|s) - beta H(pi(.|s)); global-norm gradient clipping; Adam.
 * The best partition ever seen — a rollout's start state included, so a
 * restart window that the retime and tune left better than the best is
 * kept even when the actions then leave it — is kept (ties in max(t) go to
 * the state with the smaller sum of squared group times, so restarts move
 * along plateaus).
 * Everything is deterministic for a given seed (own splitmix64 generator; no
 * clock inside an episode). Group evaluations go through the problem's
 * segment cache (problem.h).
 *
 * Actions that are invalid in a state are masked out of the softmax (they
 * would leave the state unchanged); an optional callback can mask more, and
 * when the problem has cut/core rules (chain_rules.h) the agent masks every
 * action that would break more of them than its state does, and a start that
 * breaks them becomes greedy's split (which obeys the cut rules). With a
 * callback or rules, restarts from the best state are plain, since
 * re-assigned cores and broken-up groups are not reached through actions.
 */
#ifndef PB_RL_REINFORCE_H
#define PB_RL_REINFORCE_H

#include <stdio.h>

#include "partition/chain/chain_problem.h"
#include "partition/rl/rl_window.h"

/* Action mask callback (e.g. from a Lua script): set mask[k] = 0 to forbid
 * action k in the state arranged_core (n cores). mask arrives with 1 for every
 * action valid in the environment. Return 0, or non-zero to stop training
 * with an error. */
typedef int (*pb_action_mask_fn)(void *ud, const int *arranged_core, int n, unsigned char *mask);

enum {
	PB_RL_INIT_BALANCED = 0, /* single-core groups, MAC-balanced (default) */
	PB_RL_INIT_LOCAL = 1,    /* greedy polished by the boundary-shift search */
	PB_RL_INIT_GREEDY = 2,
	PB_RL_INIT_EQUAL = 3,
	PB_RL_INIT_PACK = 4
};
/* "balanced", "local", "greedy", "equal", "pack" -> PB_RL_INIT_*, -1 if unknown. */
int pb_rl_init_parse(const char *name);
const char *pb_rl_init_name(int init);
#define PB_RL_INIT_NAMES "balanced|local|greedy|equal|pack"

typedef struct pb_rl_config {
	long episodes;      /* most training episodes (default 2000) */
	unsigned long seed; /* default 1 */
	double seconds;     /* CPU-time budget of training, checked between episodes (0 = none) */
	int hidden;         /* hidden units (default 32) */
	double lr;          /* Adam learning rate (default 3e-3) */
	double gamma;       /* discount (default 0.95) */
	double entropy;     /* entropy bonus beta (default 0.01) */
	double clip;        /* gradient norm clip (default 5) */
	double baseline_decay; /* moving-average baseline decay (default 0.9) */
	int step_limit;        /* steps per rollout (0 = default: n, at least 32) */
	int rollouts;          /* rollouts per episode: one update with their mean gradient (8) */
	double target_gap;     /* stop an episode within this of the lower bound (0.005) */
	int init;              /* PB_RL_INIT_* */
	double restart_best;   /* probability of starting from the best state (0.8) */
	double restart_window; /* of those, the share that break a window of groups (0.8);
	                          the rest start from the best as it is or re-assigned */
	int window;            /* most groups one restart breaks up (default 8) */
	double split;          /* share of broken windows re-cut into fewer groups than
	                          cores, with random core counts (0.8); the others
	                          become single-core groups */
	double retime;         /* share of broken windows whose cuts are then moved to
	                          balance the group times (1; pb_rl_retime_window) */
	double tune;           /* share of retimed windows whose core counts are then
	                          hill-climbed (1; pb_rl_tune_window) */
	int regroup;           /* 1: that hill-climb also splits and merges the
	                          window's groups (default); 0: core counts only */
	double loaded_temp;    /* a loaded agent (a checkpoint) whose restart centre
	                          has not improved for `stall` episodes samples at
	                          this temperature, softmax(logits / T), and learns
	                          as that policy, until the centre improves again
	                          (4; a fresh agent always samples at 1) */
	long stall;            /* episodes without a better centre (20) */
	long reset;            /* a restart centre that has not improved for this
	                          many episodes becomes the start again (150; 0:
	                          never); the best is kept */
	int shaped;            /* 1: reward r(s') - r(s) per step (default); 0: r(s') */
	pb_action_mask_fn mask;
	void *mask_ud;
	const int *init_state; /* n-core initial allocation (e.g. from a Lua script);
	                          NULL: the one chosen by init. Must be valid. */
	FILE *log;             /* one JSON line per episode (docs/partition.md), or NULL */
	double log_optimum;    /* written to the log's lines for the plot (NAN: none);
	                          the agent never reads it */
} pb_rl_config;

/* What the agent added to its start (pb_rl_trainer_report). */
typedef struct pb_rl_report {
	const char *start_method; /* pb_rl_init_name, or "script" (a Lua initial partition) */
	double start_time;        /* max(t) of the start */
	double best_time;         /* max(t) of the agent's best */
	long episodes;            /* episodes run */
	double seconds;           /* CPU seconds of those episodes */
	long beat_episode;        /* first episode whose best beat the start (0: the
	                             loaded agent's rollout before any episode; -1: never) */
	double beat_seconds;      /* CPU seconds of training until then (NAN: never) */
	long budget_episodes;     /* the caps: episodes (0 = none) and seconds (0 = none) */
	double budget_seconds;
	double lower_bound; /* the problem's own bound the agent may see */
	const char *agent;  /* checkpoint it started from, or NULL (a fresh network) */
} pb_rl_report;

typedef struct pb_rl_trainer pb_rl_trainer;

void pb_rl_config_default(pb_rl_config *c);
/* agent: checkpoint to start from, or NULL. */
int pb_rl_trainer_new(pb_part_problem *P, const pb_rl_config *cfg, const char *agent,
                      pb_rl_trainer **out, pb_error *err);
/* Runs up to `episodes` episodes (stops at the configured total/time). */
int pb_rl_trainer_step(pb_rl_trainer *T, int episodes, pb_error *err);
const int *pb_rl_trainer_best(const pb_rl_trainer *T);
/* The restart centre: the best state since its last reset (cfg.reset). */
const int *pb_rl_trainer_centre(const pb_rl_trainer *T);
double pb_rl_trainer_best_reward(const pb_rl_trainer *T);
double pb_rl_trainer_best_time(const pb_rl_trainer *T);
long pb_rl_trainer_episodes(const pb_rl_trainer *T);
/* Policy steps taken so far: every episode's, and a loaded agent's rollout. */
long pb_rl_trainer_steps(const pb_rl_trainer *T);
int pb_rl_trainer_done(const pb_rl_trainer *T);
double pb_rl_trainer_fraction(const pb_rl_trainer *T);
void pb_rl_trainer_stats(const pb_rl_trainer *T, FILE *out);
void pb_rl_trainer_report(const pb_rl_trainer *T, pb_rl_report *r);
/* Two lines: start -> agent, first beat; budgets and what was used. */
void pb_rl_report_text(const pb_rl_report *r, FILE *out);
/* Makes T train the network (and Adam state) of owner instead of its own:
 * episodes on several problems (models) then update one policy. Both must
 * have the same core count and network size; owner must outlive T. */
int pb_rl_trainer_share(pb_rl_trainer *T, pb_rl_trainer *owner, pb_error *err);
/* Greedy rollout of the current policy from the initial allocation (no
 * learning); the best state seen goes to ac. Returns its max(t). */
double pb_rl_trainer_rollout(pb_rl_trainer *T, int *ac);
int pb_rl_trainer_save(const pb_rl_trainer *T, const char *path, pb_error *err);
void pb_rl_trainer_free(pb_rl_trainer *T);

/* Under P's rules (chain_rules.h): masks every action that would break more
 * rules than state ac does, so a state that obeys them keeps obeying them
 * (scratch: n ints). The trainer applies it itself whenever P has rules —
 * `partition --method rl` and `train` alike. */
void pb_rl_rules_mask(pb_part_problem *P, const int *ac, unsigned char *mask, int *scratch);
/* Masks every action of the pairs outside [lo, hi] (n cores). */
void pb_rl_focus_mask(int n, int lo, int hi, unsigned char *mask);

/* Checkpoints (checkpoint.c, format in docs/partition.md). */
struct pb_rl_policy;
int pb_rl_checkpoint_save(const struct pb_rl_policy *p, int cores, long episodes, const char *path,
                          pb_error *err);
/* Loads a checkpoint; refuses one trained for another core count. */
int pb_rl_checkpoint_load(const char *path, int cores, struct pb_rl_policy **out, long *episodes,
                          pb_error *err);
/* Loads a network of `types` logits over n_pos positions (the partition
 * agent: 4 over cores - 1 pairs; the placement agent, rl_place.h: 8 over
 * cores); refuses the other kind naming it. */
int pb_rl_checkpoint_load_net(const char *path, int cores, int types, int n_pos,
                              struct pb_rl_policy **out, long *episodes, pb_error *err);

#endif
