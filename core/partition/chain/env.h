/*
 * env.h — the environment of the method: state, the 4(n-1) actions, reward.
 *
 * State: arranged_core (layers per core, zeros join the next non-zero core's
 * group; see problem.h) and arranged_macs (MACs of each entry).
 *
 * Actions are numbered from 0; action k acts on the adjacent pair
 * (core_i, core_{i+1}) with i = k mod (n-1) and type k / (n-1):
 *   a (0): merge the two into the later core's group: layers_{i+1} += layers_i,
 *          layers_i = 0 (core_i's whole group joins core_{i+1}'s group);
 *   b (1): merge the two onto the earlier core: layers_i += layers_{i+1},
 *          layers_{i+1} = 0, so core_{i+1} joins core_{i+2}'s group
 *          (needs core_{i+2}, i.e. i+1 < n-1);
 *   c (2): give the last layer of core_i to core_{i+1};
 *   d (3): give the first layer of core_{i+1} to core_i (not when it would
 *          leave the last core with no layer).
 * Every action needs core_i and core_{i+1} to be in different groups
 * (layers_i > 0); b also needs core_{i+1} to be alone in its group
 * (layers_{i+1} > 0, always true when core_i is a group's last core and
 * core_{i+1} holds layers). An invalid action leaves the state unchanged and
 * is reported as such (the return value and the reason).
 */
#ifndef PB_PARTITION_ENV_H
#define PB_PARTITION_ENV_H

enum { PB_ACT_A = 0, PB_ACT_B = 1, PB_ACT_C = 2, PB_ACT_D = 3 };

/* Number of actions for n cores: 4(n-1). */
int pb_env_n_actions(int n);
/* Decodes an action number into (type, pair index); returns 0 if out of range. */
int pb_env_decode(int n, int action, int *type, int *pair);
int pb_env_encode(int n, int type, int pair);
/* 1 if `action` is valid in state ac (n cores), else 0. When why is non-NULL
 * it receives a short reason for an invalid action. */
int pb_env_valid(const int *ac, int n, int action, const char **why);
/* Applies the action in place when valid; returns 1 if the state changed,
 * 0 if the action was invalid (state unchanged). */
int pb_env_apply(int *ac, int n, int action, const char **why);
/* Fills mask[0..4(n-1)) with 1 for valid actions; returns their count. */
int pb_env_valid_mask(const int *ac, int n, unsigned char *mask);
/* Human description, e.g. "c(3,4): give the last layer of core 3 to core 4". */
void pb_env_describe(int n, int action, char *buf, int len);
/* Initial allocation: layers split as evenly as possible over min(n, m)
 * single-core groups (the last cores first get the extra layers). */
void pb_env_equal_state(int m, int n, int *ac);

#endif
