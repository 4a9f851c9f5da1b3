/*
 * partition/rl/rl_window.h — the REINFORCE agent's restart windows
 * (rl_window.c): a window of groups broken or re-cut, its cuts retimed, its
 * core counts tuned. They use only the state and the costs (blind: no
 * optimum, no other solver's plan); the trainer (rl_reinforce.c) calls them
 * when it restarts from its own best.
 */
#ifndef PB_PARTITION_RL_WINDOW_H
#define PB_PARTITION_RL_WINDOW_H

#include "partition/chain/chain_problem.h"

/* Restart windows (used by the trainer, public for tests): breaks groups
 * g0..g1 of ac (its n_groups groups listed in gs) into `parts` groups (<= 0
 * or more than the window's cores: one per core) of part_cores[k] cores each
 * (NULL, or counts that do not add up to the window's cores: as even as
 * possible, the first ones one more), cutting the layers where the running
 * MACs cross each part's share of cores (needs at least one layer per part;
 * returns 1 if ac changed), and sets the episode's focus [*lo, *hi]: the core
 * pairs from the boundary before group g0-1 to the boundary after group g1+1
 * (so the neighbouring groups can trade layers and cores with the window). */
int pb_rl_break_window(pb_part_problem *P, int *ac, const pb_part_group *gs, int n_groups, int g0,
                       int g1, int parts, const int *part_cores, int *lo, int *hi);
/* Moves the cuts between the groups on cores [c0, c1) of ac (c0 the first
 * core of a group, c1 - 1 the last core of one) so that the largest of
 * their times is smallest for their core counts, as far as a greedy packing
 * finds: a bisection on that time, each group taking as many layers as fit
 * (a group's time only grows with its end). Core counts, the window's layers
 * and everything outside it stay. Returns 1 if ac changed. */
int pb_rl_retime_window(pb_part_problem *P, int *ac, int c0, int c1);
/* Moves one core at a time between neighbouring groups on cores [c0, c1)
 * of ac (whole groups), each try re-cut by pb_rl_retime_window, keeping a
 * move while the window's largest group time drops (at most `passes` sweeps
 * over the groups). With regroup, each sweep then also tries to split a
 * group in two (halves of its cores and layers) or merge two neighbours,
 * retimed, kept on the same rule: the window's group count changes too.
 * Returns 1 if ac changed. */
int pb_rl_tune_window(pb_part_problem *P, int *ac, int c0, int c1, int passes, int regroup);

#endif
