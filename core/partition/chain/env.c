/*
 * env.c — the actions of the method on arranged_core (env.h gives their
 * exact semantics and numbering). Pure functions of the state: the reward is
 * computed by the problem (problem.h), so the same actions serve the RL
 * agent, the local search and the manual `action K` command.
 */
#include "partition/chain/env.h"

#include <stdio.h>
#include <string.h>

int pb_env_n_actions(int n)
{
	return n > 1 ? 4 * (n - 1) : 0;
}

int pb_env_decode(int n, int action, int *type, int *pair)
{
	if (n < 2 || action < 0 || action >= pb_env_n_actions(n))
		return 0;
	*type = action / (n - 1);
	*pair = action % (n - 1);
	return 1;
}

int pb_env_encode(int n, int type, int pair)
{
	return type * (n - 1) + pair;
}

int pb_env_valid(const int *ac, int n, int action, const char **why)
{
	int type, i;
	const char *dummy;
	if (!why)
		why = &dummy;
	*why = NULL;
	if (!pb_env_decode(n, action, &type, &i)) {
		*why = "no such action";
		return 0;
	}
	if (ac[i] == 0) {
		*why = "the two cores are already in one group";
		return 0;
	}
	switch (type) {
	case PB_ACT_A:
		return 1;
	case PB_ACT_B:
		if (i + 1 >= n - 1) {
			*why = "there is no core after the later core to take it";
			return 0;
		}
		if (ac[i + 1] == 0) {
			*why = "the later core is not alone in its group";
			return 0;
		}
		return 1;
	case PB_ACT_C:
		return 1;
	default: /* d */
		if (ac[i + 1] == 0) {
			*why = "the later core holds no layer";
			return 0;
		}
		if (ac[i + 1] == 1 && i + 1 == n - 1) {
			*why = "the last core must keep at least one layer";
			return 0;
		}
		return 1;
	}
}

int pb_env_apply(int *ac, int n, int action, const char **why)
{
	if (!pb_env_valid(ac, n, action, why))
		return 0;
	int type = action / (n - 1), i = action % (n - 1);
	switch (type) {
	case PB_ACT_A:
		ac[i + 1] += ac[i];
		ac[i] = 0;
		break;
	case PB_ACT_B:
		ac[i] += ac[i + 1];
		ac[i + 1] = 0;
		break;
	case PB_ACT_C:
		ac[i]--;
		ac[i + 1]++;
		break;
	default:
		ac[i]++;
		ac[i + 1]--;
		break;
	}
	return 1;
}

int pb_env_valid_mask(const int *ac, int n, unsigned char *mask)
{
	int na = pb_env_n_actions(n), cnt = 0;
	for (int k = 0; k < na; k++) {
		mask[k] = (unsigned char)pb_env_valid(ac, n, k, NULL);
		cnt += mask[k];
	}
	return cnt;
}

void pb_env_describe(int n, int action, char *buf, int len)
{
	int type, i;
	if (!pb_env_decode(n, action, &type, &i)) {
		snprintf(buf, (size_t)len, "action %d (out of range 0..%d)", action,
		         pb_env_n_actions(n) - 1);
		return;
	}
	char tmp[128];
	if (type == PB_ACT_A)
		snprintf(tmp, sizeof tmp, "merge core %d's group into core %d's group", i, i + 1);
	else if (type == PB_ACT_B)
		snprintf(tmp, sizeof tmp,
		         "merge core %d's layers onto core %d; core %d joins the next group", i + 1,
		         i, i + 1);
	else if (type == PB_ACT_C)
		snprintf(tmp, sizeof tmp, "give the last layer of core %d to core %d", i, i + 1);
	else
		snprintf(tmp, sizeof tmp, "give the first layer of core %d to core %d", i + 1, i);
	snprintf(buf, (size_t)len, "%c(%d,%d): %s", "abcd"[type], i, i + 1, tmp);
}

void pb_env_equal_state(int m, int n, int *ac)
{
	int groups = m < n ? m : n;
	memset(ac, 0, (size_t)n * sizeof *ac);
	/* One core per group; when there are fewer layers than cores the spare
	 * cores come first and join the first group (zeros join the next core). */
	int spare = n - groups;
	for (int g = 0; g < groups; g++) {
		int layers = m / groups + (g >= groups - m % groups ? 1 : 0);
		ac[spare + g] = layers;
	}
}
