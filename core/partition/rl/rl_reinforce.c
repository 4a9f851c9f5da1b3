/*
 * partition/rl/rl_reinforce.c — REINFORCE training loop of the many-core partition agent
 * (reinforce.h documents the episode, the update and determinism).
 *
 * Buffers are sized for step_limit steps and reused by every episode; the
 * forward pass of each step is kept (inputs, hidden activations and
 * probabilities) so that the update needs only the backward pass.
 *
 * Features (RL_FEATURES per core pair p, i.e. cores p and p+1): for each of
 * the two cores its group's time / max(t), bottleneck flag, group cores / 8,
 * "last core of its group" flag, arranged_core x n/m, arranged_macs x n/M,
 * storage / memory and routing / time of its group (8 each); for cores p-1
 * and p+2 whether they exist, their group time / max(t) and bottleneck flag
 * (3 each); the time / max(t) of the group before core p's group and of the
 * group after core p+1's group; the problem's lower bound / max(t) (a cheap
 * bound it computes itself: perfect balance), max(t) / the agent's own best
 * so far - 1 (capped at 1) and the fraction of the episode's steps used.
 * All are ratios or counts scaled by the chip's and the model's size, so one
 * network serves models of any size and chips of any core count.
 *
 * The training loop's update is split so that a distributed run can combine
 * gradients: episode_gradient() leaves the episode's complete gradient in
 * T->grad, apply_gradient() steps Adam with it.
 */
#include "partition/rl/rl_reinforce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partition/chain/baselines.h"
#include "partition/chain/chain_rules.h"
#include "partition/chain/env.h"
#include "partition/rl/rl_policy.h"
#include "util/fmt.h"
#include "util/ranks.h"

enum { RL_CORE_F = 8, RL_FEATURES = 2 * RL_CORE_F + 2 * 3 + 2 + 3 };

struct pb_rl_trainer {
	pb_part_problem *P;
	pb_rl_config cfg;
	pb_rl_policy *pol;
	pb_rl_adam adam;
	uint64_t rng;
	int n, na, n_in, L;
	int *init_state, *state, *best, *gid, *part_cores, *next;
	double best_obj, best_sq, best_time, best_reward, lb;
	double start_obj, start_time, beat_seconds;
	long beat_episode;
	pb_rl_trainer *owner; /* whose network this trainer trains (itself by default) */
	char *agent;          /* checkpoint path it started from, or NULL */
	long updates;         /* episodes this network has learnt from (its checkpoint's) */
	double *xs, *hs, *probs, *rews, *ret, *adv, *base, *grad, *gacc, *am, *cf, *dh;
	unsigned char *masks, *base_set;
	int *acts;
	int lo, hi;  /* pairs this episode may act on (its focus, start_state) */
	double temp; /* a loaded agent's temperature once its best stalls (cfg.loaded_temp) */
	pb_part_group *groups;
	int *ctr; /* the restart centre: the best since its last reset (cfg.reset) */
	double ctr_obj, ctr_sq;
	long ctr_gain; /* episode whose centre last improved */
	long episodes, steps;
	int rollout_steps; /* steps of the last pb_rl_trainer_rollout */
	int done;
	double elapsed, last_loss, last_norm, last_episode_best, last_episode_reward;
	int last_steps;
};

void pb_rl_config_default(pb_rl_config *c)
{
	memset(c, 0, sizeof *c);
	c->episodes = 2000;
	c->seed = 1;
	c->hidden = 32;
	c->lr = 3e-3;
	c->gamma = 0.95;
	c->entropy = 0.01;
	c->clip = 5.0;
	c->baseline_decay = 0.9;
	c->target_gap = 0.005;
	c->init = PB_RL_INIT_BALANCED;
	c->restart_best = 0.8;
	c->restart_window = 0.8;
	c->window = 8;
	c->split = 0.8;
	c->retime = 1.0;
	c->tune = 1.0;
	c->regroup = 1;
	c->loaded_temp = 4;
	c->stall = 20;
	c->reset = 150;
	c->shaped = 1;
	c->step_limit = 0;
	c->rollouts = 8;
	c->log_optimum = NAN;
}

static const char *const init_names[] = {"balanced", "local", "greedy", "equal", "pack"};

int pb_rl_init_parse(const char *name)
{
	for (int i = 0; i < (int)(sizeof init_names / sizeof *init_names); i++)
		if (name && strcmp(name, init_names[i]) == 0)
			return i;
	return -1;
}

const char *pb_rl_init_name(int init)
{
	return init >= 0 && init < (int)(sizeof init_names / sizeof *init_names) ? init_names[init]
	                                                                         : "balanced";
}

/* Training time is the thread's CPU time: "S seconds of training on one
 * core" then means the same on a busy machine as on an idle one. */
static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cap(double v, double hi)
{
	return v < hi ? v : hi;
}

/* Policy inputs of state ac (groups in T->groups, evaluation ev) at step t:
 * per-core features first (T->cf), then RL_FEATURES per pair. */
static void features(pb_rl_trainer *T, const int *ac, const pb_part_eval *ev, int t, double *x)
{
	const pb_part_problem *P = T->P;
	const int n = T->n;
	pb_part_arranged_macs(P, ac, T->am);
	double lscale = (double)n / P->m, mscale = P->total_macs > 0 ? n / P->total_macs : 0;
	double tmax = ev->max_time > 0 ? ev->max_time : 1;
	for (int g = 0; g < ev->n_groups; g++) {
		const pb_part_group *gr = &T->groups[g];
		double rt = gr->time / tmax, bn = gr->time >= ev->max_time * (1 - 1e-12) ? 1 : 0;
		double st = cap(gr->storage / P->hw.memory, 2);
		double rs = gr->time > 0 ? gr->routing / gr->time : 0;
		for (int c = gr->first_core; c < gr->first_core + gr->cores; c++) {
			double *f = T->cf + (size_t)c * RL_CORE_F;
			T->gid[c] = g;
			f[0] = rt;
			f[1] = bn;
			f[2] = cap(gr->cores / 8.0, 2);
			f[3] = ac[c] > 0;
			f[4] = cap(ac[c] * lscale, 4);
			f[5] = cap(T->am[c] * mscale, 4);
			f[6] = st;
			f[7] = rs;
		}
	}
	double lbr = T->lb > 0 ? cap(T->lb / tmax, 1) : 0, frac = (double)t / T->L;
	double own = isfinite(T->best_time) && T->best_time > 0
	                 ? fmax(-1, cap(ev->max_time / T->best_time - 1, 1))
	                 : 0;
	for (int p = T->lo; p <= T->hi; p++) { /* pairs outside the focus are masked */
		double *xp = x + (size_t)p * RL_FEATURES;
		memcpy(xp, T->cf + (size_t)p * RL_CORE_F, RL_CORE_F * sizeof *xp);
		memcpy(xp + RL_CORE_F, T->cf + (size_t)(p + 1) * RL_CORE_F, RL_CORE_F * sizeof *xp);
		double *q = xp + 2 * RL_CORE_F;
		q[0] = p > 0;
		q[1] = p > 0 ? T->cf[(size_t)(p - 1) * RL_CORE_F] : 0;
		q[2] = p > 0 ? T->cf[(size_t)(p - 1) * RL_CORE_F + 1] : 0;
		q[3] = p + 2 < n;
		q[4] = p + 2 < n ? T->cf[(size_t)(p + 2) * RL_CORE_F] : 0;
		q[5] = p + 2 < n ? T->cf[(size_t)(p + 2) * RL_CORE_F + 1] : 0;
		int gl = T->gid[p] - 1, gr = T->gid[p + 1] + 1;
		q[6] = gl >= 0 ? T->groups[gl].time / tmax : 0;
		q[7] = gr < ev->n_groups ? T->groups[gr].time / tmax : 0;
		q[8] = lbr;
		q[9] = own;
		q[10] = frac;
	}
}

/* Is a state of objective obj (sum of squared group times sq) better than a
 * held one (ho, hsq)? Lower objective wins; on a tie (a plateau of max(t))
 * the better balanced state wins, so restarts from it keep moving. */
static int is_better(double obj, double sq, double ho, double hsq)
{
	return obj < ho * (1 - 1e-12) || (obj <= ho * (1 + 1e-12) && sq < hsq * (1 - 1e-12));
}

/* The best (reported) and the restart centre (the best since the centre was
 * last reset, cfg.reset). */
static void consider_best(pb_rl_trainer *T, const int *ac, const pb_part_eval *ev)
{
	double obj = pb_part_objective(ev), sq = ev->sum_sq_time;
	if (is_better(obj, sq, T->best_obj, T->best_sq)) {
		T->best_obj = obj;
		T->best_sq = sq;
		T->best_time = ev->max_time;
		T->best_reward = ev->reward;
		memcpy(T->best, ac, (size_t)T->n * sizeof *ac);
	}
	if (is_better(obj, sq, T->ctr_obj, T->ctr_sq)) {
		if (obj < T->ctr_obj * (1 - 1e-12))
			T->ctr_gain = T->episodes;
		T->ctr_obj = obj;
		T->ctr_sq = sq;
		memcpy(T->ctr, ac, (size_t)T->n * sizeof *ac);
	}
}

int pb_rl_trainer_new(pb_part_problem *P, const pb_rl_config *cfg, const char *agent,
                      pb_rl_trainer **out, pb_error *err)
{
	*out = NULL;
	if (P->n < 2)
		return pb_err(err, PB_EUSAGE,
		              "rl: the layout has one core: there are no actions to learn");
	pb_rl_trainer *T = calloc(1, sizeof *T);
	if (!T)
		return pb_err(err, PB_ENOMEM, "rl: out of memory");
	T->P = P;
	T->cfg = *cfg;
	T->n = P->n;
	T->na = pb_env_n_actions(P->n);
	T->n_in = RL_FEATURES;
	T->lo = 0;
	T->hi = P->n - 2;
	if (T->cfg.window < 1)
		T->cfg.window = 1;
	if (T->cfg.rollouts < 1)
		T->cfg.rollouts = 1;
	if (T->cfg.hidden < 1)
		T->cfg.hidden = 32;
	T->L = cfg->step_limit > 0 ? cfg->step_limit : (P->n > 32 ? P->n : 32);
	T->rng = (uint64_t)cfg->seed * 0x2545f4914f6cdd1dULL + 1;
	T->owner = T;
	T->lb = P->lower_bound;
	T->best_time = INFINITY;
	T->temp = 1;
	if (T->cfg.episodes <= 0 && !(T->cfg.seconds > 0))
		T->cfg.episodes = 2000; /* neither budget given: the default cap */
	int rc = PB_OK;
	if (!P->seg)
		rc = pb_part_problem_cache(P, 16, err);
	if (rc == PB_OK && agent && !(T->agent = strdup(agent)))
		rc = pb_err(err, PB_ENOMEM, "rl: out of memory");
	if (rc == PB_OK && agent) {
		long ep;
		rc = pb_rl_checkpoint_load(agent, P->n, &T->pol, &ep, err);
		if (rc == PB_OK && T->pol->n_in != T->n_in) {
			rc = pb_err(err, PB_EINPUT,
			            "%s: the network takes %d inputs per core pair, expected %d",
			            agent, T->pol->n_in, T->n_in);
		}
		if (rc == PB_OK) {
			T->cfg.hidden = T->pol->n_hidden;
			T->updates = ep;
			if (T->cfg.loaded_temp > 0)
				T->temp = T->cfg.loaded_temp;
		}
	} else if (rc == PB_OK) {
		T->pol = pb_rl_policy_new(T->n_in, T->cfg.hidden, 4, T->n - 1, T->rng);
	}
	/* train under mpirun: one network everywhere, other episodes on each rank */
	T->rng += (uint64_t)pb_ranks_rank() * 0x9E3779B97F4A7C15ULL;
	size_t L = (size_t)T->L, n = (size_t)T->n, na = (size_t)T->na;
	size_t nh = (size_t)T->cfg.hidden, np = n - 1;
	if (rc == PB_OK) {
		T->init_state = malloc(n * sizeof(int));
		T->state = malloc(n * sizeof(int));
		T->best = malloc(n * sizeof(int));
		T->gid = malloc(n * sizeof(int));
		T->part_cores = malloc(n * sizeof(int));
		T->next = malloc(n * sizeof(int));
		T->acts = malloc(L * sizeof(int));
		T->xs = calloc(L * np * (size_t)T->n_in, sizeof(double));
		T->hs = malloc(L * np * nh * sizeof(double));
		T->probs = malloc(L * na * sizeof(double));
		T->rews = malloc(L * sizeof(double));
		T->ret = malloc(L * sizeof(double));
		T->adv = malloc(L * sizeof(double));
		T->base = calloc(L, sizeof(double));
		T->base_set = calloc(L, 1);
		T->masks = malloc(L * na);
		T->am = malloc(n * sizeof(double));
		T->cf = malloc(n * RL_CORE_F * sizeof(double));
		T->dh = malloc(np * nh * sizeof(double));
		T->groups = malloc(n * sizeof(pb_part_group));
		T->ctr = malloc(n * sizeof(int));
		if (!T->pol || !T->init_state || !T->state || !T->best || !T->gid ||
		    !T->part_cores || !T->next || !T->acts || !T->xs || !T->hs || !T->probs ||
		    !T->rews || !T->ret || !T->adv || !T->base || !T->base_set || !T->masks ||
		    !T->am || !T->cf || !T->dh || !T->groups || !T->ctr)
			rc = pb_err(err, PB_ENOMEM, "rl: out of memory");
	}
	if (rc == PB_OK) {
		T->grad = calloc((size_t)T->pol->n_params, sizeof(double));
		T->gacc = calloc((size_t)T->pol->n_params, sizeof(double));
		if (!T->grad || !T->gacc ||
		    pb_rl_adam_init(&T->adam, T->pol->n_params, T->cfg.lr, T->cfg.clip))
			rc = pb_err(err, PB_ENOMEM, "rl: out of memory");
	}
	if (rc) {
		pb_rl_trainer_free(T);
		return rc;
	}
	T->best_obj = INFINITY;
	T->best_sq = INFINITY;
	T->ctr_obj = INFINITY;
	T->ctr_sq = INFINITY;
	pb_part_eval ev;
	/* The start, and the agent's best so far: that start alone. */
	if (T->cfg.init_state) /* given by the caller (a Lua initial_partition) */
		memcpy(T->init_state, T->cfg.init_state, (size_t)T->n * sizeof *T->init_state);
	else if (T->cfg.init == PB_RL_INIT_EQUAL)
		pb_part_equal(P, T->init_state);
	else if (T->cfg.init == PB_RL_INIT_GREEDY)
		pb_part_greedy(P, T->init_state);
	else if (T->cfg.init == PB_RL_INIT_PACK)
		pb_part_pack(P, T->init_state);
	else if (T->cfg.init == PB_RL_INIT_LOCAL) {
		pb_part_greedy(P, T->init_state);
		pb_part_local_search(P, T->init_state, 1 << 20);
	} else
		pb_part_balanced(P, T->init_state);
	pb_part_evaluate(P, T->init_state, &ev, T->groups);
	if (ev.violations > 0 && !T->cfg.init_state && T->cfg.init != PB_RL_INIT_GREEDY) {
		/* Under cut rules the agent starts where they hold: greedy cuts only
		 * where they allow (the mask then keeps every state obeying them). */
		T->cfg.init = PB_RL_INIT_GREEDY;
		pb_part_greedy(P, T->init_state);
		pb_part_evaluate(P, T->init_state, &ev, T->groups);
	}
	consider_best(T, T->init_state, &ev);
	T->start_obj = T->best_obj;
	T->start_time = T->best_time;
	T->beat_episode = -1;
	T->beat_seconds = NAN;
	if (agent) { /* what the loaded agent finds on its own, before any episode */
		/* its steps and CPU time are the agent's work: counted in the
		 * run's steps and in the --seconds budget */
		double t0 = now_seconds();
		pb_rl_trainer_rollout(T, T->state);
		T->elapsed += now_seconds() - t0;
		T->steps += T->rollout_steps;
		if (T->best_obj < T->start_obj * (1 - 1e-12)) {
			T->beat_episode = 0;
			T->beat_seconds = T->elapsed;
		}
	}
	*out = T;
	return PB_OK;
}

/* Masks for state ac: environment validity, then the optional callback.
 * Returns the number of allowed actions, or -1 when the callback failed. */
static int make_mask(pb_rl_trainer *T, const int *ac, unsigned char *mask)
{
	pb_env_valid_mask(ac, T->n, mask);
	if (T->cfg.mask && T->cfg.mask(T->cfg.mask_ud, ac, T->n, mask) != 0)
		return -1;
	pb_rl_focus_mask(T->n, T->lo, T->hi, mask);
	if (pb_part_has_rules(T->P))
		pb_rl_rules_mask(T->P, ac, mask, T->next);
	int cnt = 0;
	for (int k = 0; k < T->na; k++)
		cnt += mask[k] != 0;
	return cnt;
}

void pb_rl_rules_mask(pb_part_problem *P, const int *ac, unsigned char *mask, int *scratch)
{
	const int n = P->n;
	pb_part_eval ev, e2;
	pb_part_evaluate(P, ac, &ev, NULL);
	for (int k = 0; k < pb_env_n_actions(n); k++) {
		if (!mask[k])
			continue;
		memcpy(scratch, ac, (size_t)n * sizeof *ac);
		if (!pb_part_rules_apply(P, scratch, k, NULL))
			continue;
		pb_part_evaluate(P, scratch, &e2, NULL);
		if (e2.violations > ev.violations)
			mask[k] = 0;
	}
}

void pb_rl_focus_mask(int n, int lo, int hi, unsigned char *mask)
{
	if (lo <= 0 && hi >= n - 2)
		return;
	for (int k = 0; k < pb_env_n_actions(n); k++) {
		int p = k % (n - 1);
		if (p < lo || p > hi)
			mask[k] = 0;
	}
}

/* The episode's start state (reinforce.h): the initial allocation, or the
 * best state as it is, with greedily re-assigned cores, or with a window of
 * up to cfg.window groups broken into single-core groups or re-cut into
 * groups with random core counts; a window also sets the focus T->lo..hi. */
static void start_state(pb_rl_trainer *T)
{
	const int n = T->n;
	T->lo = 0;
	T->hi = n - 2;
	if (!(T->cfg.restart_best > 0 && pb_rl_uniform(&T->rng) < T->cfg.restart_best)) {
		memcpy(T->state, T->init_state, (size_t)n * sizeof *T->state);
		return;
	}
	memcpy(T->state, T->ctr, (size_t)n * sizeof *T->state);
	double u = pb_rl_uniform(&T->rng);
	/* Re-assigned cores and broken-up groups are not reached by actions, so
	 * they could bypass an action mask: with a mask, restarts are plain. */
	double plain = (1 - T->cfg.restart_window) / 2;
	if (u < plain || T->cfg.mask || pb_part_has_rules(T->P))
		return;
	if (u < 2 * plain) { /* the best groups' layers with a fresh core assignment */
		pb_part_rebalance_cores(T->P, T->state);
		return;
	}
	pb_part_eval ev;
	pb_part_evaluate(T->P, T->state, &ev, T->groups);
	int g = pb_rl_uniform(&T->rng) < 0.5 ? ev.bottleneck
	                                     : (int)(pb_rl_rand(&T->rng) % (uint64_t)ev.n_groups);
	/* A window of 1 to cfg.window groups around g, each size equally likely. */
	int w = 1 + (int)(pb_rl_rand(&T->rng) % (uint64_t)T->cfg.window), g1 = g;
	while (g1 - g + 1 < w && (g > 0 || g1 + 1 < ev.n_groups)) {
		if (g1 + 1 < ev.n_groups && (g == 0 || pb_rl_uniform(&T->rng) < 0.5))
			g1++;
		else
			g--;
	}
	/* Into single-core groups, or (cfg.split of the time) into between w+1
	 * groups and one per core, each size equally likely. */
	int cores = 0, parts = 0, *pc = T->part_cores;
	for (int k = g; k <= g1; k++)
		cores += T->groups[k].cores;
	if (cores > w + 1 && pb_rl_uniform(&T->rng) < T->cfg.split) {
		parts = w + 1 + (int)(pb_rl_rand(&T->rng) % (uint64_t)(cores - w));
		/* Random core counts: parts - 1 distinct cut points among the
		 * cores - 1 gaps (a partial Fisher-Yates shuffle of the gaps). */
		int *gap = T->gid; /* scratch, n entries */
		for (int k = 0; k < cores - 1; k++)
			gap[k] = k + 1;
		for (int k = 0; k < parts - 1; k++) {
			int j = k + (int)(pb_rl_rand(&T->rng) % (uint64_t)(cores - 1 - k));
			int tmp = gap[k];
			gap[k] = gap[j];
			gap[j] = tmp;
		}
		for (int k = 1; k < parts - 1; k++) /* sort the cut points */
			for (int j = k; j > 0 && gap[j - 1] > gap[j]; j--) {
				int tmp = gap[j];
				gap[j] = gap[j - 1];
				gap[j - 1] = tmp;
			}
		for (int k = 0, prev = 0; k < parts; k++) {
			int at = k < parts - 1 ? gap[k] : cores;
			pc[k] = at - prev;
			prev = at;
		}
	}
	if (pb_rl_break_window(T->P, T->state, T->groups, ev.n_groups, g, g1, parts,
	                       parts ? pc : NULL, &T->lo, &T->hi) &&
	    pb_rl_uniform(&T->rng) < T->cfg.retime) {
		int c0 = T->groups[g].first_core,
		    c1 = T->groups[g1].first_core + T->groups[g1].cores;
		pb_rl_retime_window(T->P, T->state, c0, c1);
		if (T->cfg.tune > 0 && pb_rl_uniform(&T->rng) < T->cfg.tune)
			pb_rl_tune_window(T->P, T->state, c0, c1, 4, T->cfg.regroup);
	}
}

/* The episode's complete policy gradient (mean over its steps of the
 * REINFORCE loss with advantages adv * scale) into T->grad; T->last_loss. */
static void episode_gradient(pb_rl_trainer *T, int steps, double scale)
{
	const int n = T->n, na = T->na, ni = T->n_in * (n - 1), nh = T->cfg.hidden * (n - 1);
	memset(T->grad, 0, (size_t)T->pol->n_params * sizeof *T->grad);
	double loss = 0;
	for (int t = 0; t < steps; t++)
		loss += pb_rl_policy_backward(T->pol, T->xs + (size_t)t * ni,
		                              T->masks + (size_t)t * na, T->hs + (size_t)t * nh,
		                              T->probs + (size_t)t * na, T->acts[t],
		                              T->adv[t] * scale, T->cfg.entropy, T->grad, T->dh);
	for (int i = 0; i < T->pol->n_params; i++)
		T->grad[i] /= steps;
	T->last_loss = loss / steps;
}

/* One Adam step of the (shared) network with the complete gradient T->grad:
 * the one place where a batch gradient is final (a distributed run would
 * combine the workers' T->grad just before this). */
static void apply_gradient(pb_rl_trainer *T)
{
	/* train under mpirun: synchronous data-parallel REINFORCE, every rank steps
	 * Adam with the mean of the ranks' episode gradients (docs/scale-out.md) */
	int ranks = pb_ranks_size();
	pb_error e = {0};
	if (ranks > 1) {
		/* a failed sum (a rank died): no step, the network stays the one
		 * every rank holds, which train then saves (issue 39) */
		if (pb_ranks_sum(T->grad, (size_t)T->pol->n_params, &e) != PB_OK)
			return;
		for (int i = 0; i < T->pol->n_params; i++)
			T->grad[i] /= ranks;
	}
	T->last_norm = pb_rl_adam_step(&T->owner->adam, T->pol->w, T->grad);
}

/* prob <- prob^(1/tau), renormalised over the valid actions: the softmax of
 * logits / tau. The backward pass with these probabilities is then the
 * gradient of the tempered policy (up to the factor 1/tau). */
static void temper(double *prob, const unsigned char *mask, int na, double tau)
{
	double sum = 0;
	for (int k = 0; k < na; k++)
		if (mask[k] && prob[k] > 0)
			sum += prob[k] = pow(prob[k], 1 / tau);
	for (int k = 0; k < na; k++)
		prob[k] = mask[k] && sum > 0 ? prob[k] / sum : 0;
}

/* One rollout of an episode: from its own start state (start_state), up to
 * L steps sampled from the policy; its gradient (the mean over its steps) is
 * added to T->gacc and *count counts the rollouts that took a step. */
static int rollout(pb_rl_trainer *T, int *count, pb_error *err)
{
	pb_part_problem *P = T->P;
	const int n = T->n, na = T->na, ni = T->n_in * (n - 1), nh = T->cfg.hidden * (n - 1);
	start_state(T);
	pb_part_eval ev;
	pb_part_evaluate(P, T->state, &ev, T->groups);
	/* A restart's state is one the agent has seen too: a window re-cut,
	 * retimed and tuned may be its best before any action. */
	consider_best(T, T->state, &ev);
	double goal = T->lb * (1 + T->cfg.target_gap);
	int steps = 0;
	double ep_best = INFINITY, ep_reward = -INFINITY, prev_reward = ev.reward;
	for (int t = 0; t < T->L; t++) {
		double *x = T->xs + (size_t)t * ni, *h = T->hs + (size_t)t * nh;
		double *prob = T->probs + (size_t)t * na;
		unsigned char *mask = T->masks + (size_t)t * na;
		int cnt = make_mask(T, T->state, mask);
		if (cnt < 0)
			return pb_err(err, PB_EINPUT, "rl: the action mask callback failed");
		if (cnt == 0)
			break;
		features(T, T->state, &ev, t, x);
		pb_rl_policy_forward(T->pol, x, mask, h, prob);
		if (T->temp != 1 && T->episodes - T->ctr_gain >= T->cfg.stall)
			temper(prob, mask, na, T->temp);
		double u = pb_rl_uniform(&T->rng), acc = 0;
		int a = -1;
		for (int k = 0; k < na; k++) {
			if (!mask[k])
				continue;
			a = k;
			acc += prob[k];
			if (u < acc)
				break;
		}
		T->acts[t] = a;
		pb_part_rules_apply(P, T->state, a, NULL);
		pb_part_evaluate(P, T->state, &ev, T->groups);
		T->rews[t] = T->cfg.shaped ? ev.reward - prev_reward : ev.reward;
		prev_reward = ev.reward;
		consider_best(T, T->state, &ev);
		if (ev.max_time < ep_best)
			ep_best = ev.max_time;
		if (ev.reward > ep_reward)
			ep_reward = ev.reward;
		steps = t + 1;
		if (!ev.over_memory && ev.max_time <= goal)
			break;
	}
	if (ep_best < T->last_episode_best)
		T->last_episode_best = ep_best;
	if (ep_reward > T->last_episode_reward)
		T->last_episode_reward = ep_reward;
	T->last_steps += steps;
	T->steps += steps;
	if (steps == 0)
		return PB_OK;
	/* Returns, baseline, advantages. */
	double G = 0;
	for (int t = steps - 1; t >= 0; t--) {
		G = T->rews[t] + T->cfg.gamma * G;
		T->ret[t] = G;
	}
	double mean = 0, var = 0, mag = 0;
	for (int t = 0; t < steps; t++) {
		if (!T->base_set[t]) {
			T->base[t] = T->ret[t];
			T->base_set[t] = 1;
		}
		T->adv[t] = T->ret[t] - T->base[t];
		T->base[t] =
		    T->cfg.baseline_decay * T->base[t] + (1 - T->cfg.baseline_decay) * T->ret[t];
		mean += T->adv[t];
		mag += fabs(T->ret[t]);
	}
	mean /= steps;
	for (int t = 0; t < steps; t++)
		var += (T->adv[t] - mean) * (T->adv[t] - mean);
	double sd = sqrt(var / steps), scale_ref = mag / steps * 1e-3 + 1e-12;
	episode_gradient(T, steps, 1.0 / (sd > scale_ref ? sd : scale_ref));
	for (int i = 0; i < T->pol->n_params; i++)
		T->gacc[i] += T->grad[i];
	++*count;
	return PB_OK;
}

/* One episode: cfg.rollouts rollouts with the current policy, each from its
 * own start state, then one Adam step with the mean of their gradients. */
static int run_episode(pb_rl_trainer *T, pb_error *err)
{
	int count = 0, np = T->pol->n_params;
	double loss = 0;
	T->last_episode_best = INFINITY;
	T->last_episode_reward = -INFINITY;
	T->last_steps = 0;
	memset(T->gacc, 0, (size_t)np * sizeof *T->gacc);
	if (T->cfg.reset > 0 && T->episodes - T->ctr_gain >= T->cfg.reset) {
		/* the centre has stalled: the search starts over from the start */
		pb_part_eval ev;
		T->ctr_obj = INFINITY;
		T->ctr_gain = T->episodes;
		pb_part_evaluate(T->P, T->init_state, &ev, T->groups);
		consider_best(T, T->init_state, &ev);
	}
	for (int r = 0; r < T->cfg.rollouts; r++) {
		int before = count, rc = rollout(T, &count, err);
		if (rc)
			return rc;
		if (count > before)
			loss += T->last_loss;
	}
	/* No step at all: no update, except under mpirun, where the other
	 * ranks' gradients still count (this rank adds zeros). */
	if (count == 0 && pb_ranks_size() <= 1)
		return PB_OK;
	for (int i = 0; i < np; i++)
		T->grad[i] = count ? T->gacc[i] / count : 0;
	T->last_loss = count ? loss / count : 0;
	apply_gradient(T);
	return PB_OK;
}

/* One JSON line per episode: the best state of the episode (max(t), its
 * reward), the best so far, the start's max(t), the lower bound, steps,
 * loss; and, when the caller gave one for the plot, the optimum and the gaps
 * to it (the agent never reads those). An episode with no step (every
 * action masked) logs nulls for its own figures. */
static void log_episode(const pb_rl_trainer *T)
{
	FILE *f = T->cfg.log;
	double opt = T->cfg.log_optimum;
	int has_opt = isfinite(opt) && opt > 0,
	    ran = T->last_steps > 0 && isfinite(T->last_episode_best);
	fprintf(f, "{\"episode\":%ld,\"steps\":%d", T->episodes, T->last_steps);
	if (ran)
		fprintf(f, ",\"reward\":%.9g,\"max_time\":%.9g", T->last_episode_reward,
		        T->last_episode_best);
	else
		fputs(",\"reward\":null,\"max_time\":null", f);
	fprintf(f, ",\"best_time\":%.9g,\"start_time\":%.9g,\"lower_bound\":%.9g", T->best_time,
	        T->start_time, T->lb);
	if (has_opt && ran)
		fprintf(f, ",\"gap\":%.9g", T->last_episode_best / opt - 1);
	if (has_opt)
		fprintf(f, ",\"best_gap\":%.9g,\"optimum\":%.9g", T->best_time / opt - 1, opt);
	fprintf(f, ",\"loss\":%.9g}\n", T->last_loss);
}

int pb_rl_trainer_step(pb_rl_trainer *T, int episodes, pb_error *err)
{
	for (int k = 0; k < episodes && !T->done; k++) {
		double t0 = now_seconds();
		int rc = run_episode(T, err);
		T->elapsed += now_seconds() - t0;
		if (rc)
			return rc;
		T->episodes++;
		T->owner->updates++;
		if (T->beat_episode < 0 && T->best_obj < T->start_obj * (1 - 1e-12)) {
			T->beat_episode = T->episodes;
			T->beat_seconds = T->elapsed;
		}
		if (T->cfg.log)
			log_episode(T);
		if ((T->cfg.episodes > 0 && T->episodes >= T->cfg.episodes) ||
		    (T->cfg.seconds > 0 && T->elapsed >= T->cfg.seconds))
			T->done = 1;
	}
	return PB_OK;
}

double pb_rl_trainer_rollout(pb_rl_trainer *T, int *ac)
{
	const int n = T->n, na = T->na;
	T->lo = 0;
	T->hi = n - 2;
	memcpy(ac, T->init_state, (size_t)n * sizeof *ac);
	unsigned char *mask = T->masks;
	double *x = T->xs, *h = T->hs, *prob = T->probs;
	pb_part_eval ev;
	pb_part_evaluate(T->P, ac, &ev, T->groups);
	T->rollout_steps = 0;
	for (int t = 0; t < T->L; t++) {
		if (make_mask(T, ac, mask) <= 0)
			break;
		T->rollout_steps++;
		features(T, ac, &ev, t, x);
		pb_rl_policy_forward(T->pol, x, mask, h, prob);
		int a = -1;
		for (int k = 0; k < na; k++)
			if (mask[k] && (a < 0 || prob[k] > prob[a]))
				a = k;
		pb_part_rules_apply(T->P, ac, a, NULL);
		pb_part_evaluate(T->P, ac, &ev, T->groups);
		consider_best(T, ac, &ev);
	}
	memcpy(ac, T->best, (size_t)n * sizeof *ac);
	return T->best_time;
}

const int *pb_rl_trainer_best(const pb_rl_trainer *T)
{
	return T->best;
}

const int *pb_rl_trainer_centre(const pb_rl_trainer *T)
{
	return T->ctr;
}

double pb_rl_trainer_best_reward(const pb_rl_trainer *T)
{
	return T->best_reward;
}

double pb_rl_trainer_best_time(const pb_rl_trainer *T)
{
	return T->best_time;
}

long pb_rl_trainer_episodes(const pb_rl_trainer *T)
{
	return T->episodes;
}

long pb_rl_trainer_steps(const pb_rl_trainer *T)
{
	return T->steps;
}

int pb_rl_trainer_done(const pb_rl_trainer *T)
{
	return T->done;
}

double pb_rl_trainer_fraction(const pb_rl_trainer *T)
{
	double f = T->cfg.episodes > 0 ? (double)T->episodes / (double)T->cfg.episodes : 0;
	if (T->cfg.seconds > 0 && T->elapsed / T->cfg.seconds > f)
		f = T->elapsed / T->cfg.seconds;
	return f > 1 ? 1 : f;
}

void pb_rl_trainer_stats(const pb_rl_trainer *T, FILE *out)
{
	fprintf(out, "rl: %ld episodes, %ld steps, %.1f episodes/s, best max(t) %.6f ms",
	        T->episodes, T->steps, T->elapsed > 0 ? T->episodes / T->elapsed : 0.0,
	        T->best_time * 1e3);
	fprintf(out, ", last loss %.4g, grad norm %.4g\n", T->last_loss, T->last_norm);
	pb_rl_report r;
	pb_rl_trainer_report(T, &r);
	pb_rl_report_text(&r, out);
}

/* Times are the trainer's CPU seconds (now_seconds), each printed in its own unit by
 * util/fmt.h: "3.12 ms", "12.8 s" (they were once scaled by 1e3 and labelled s). */
void pb_rl_report_text(const pb_rl_report *r, FILE *out)
{
	char t[32];
	fprintf(out, "rl: start %s %.6f ms -> agent %.6f ms (%+.3f%%)", r->start_method,
	        r->start_time * 1e3, r->best_time * 1e3,
	        r->start_time > 0 ? 100 * (r->best_time / r->start_time - 1) : 0.0);
	if (r->beat_episode < 0)
		fputs("; never beat its start", out);
	else if (r->beat_episode == 0)
		fprintf(out,
		        "; beat its start before any episode (the loaded agent's rollout, %s CPU)",
		        pb_fmt_time(r->beat_seconds, t, sizeof t));
	else
		fprintf(out, "; first beat its start at episode %ld (after %s CPU)",
		        r->beat_episode, pb_fmt_time(r->beat_seconds, t, sizeof t));
	char be[32] = "no cap", bs[32] = "no cap";
	if (r->budget_episodes > 0)
		snprintf(be, sizeof be, "%ld", r->budget_episodes);
	if (r->budget_seconds > 0)
		snprintf(bs, sizeof bs, "%g s", r->budget_seconds);
	fprintf(out, "\nrl: budget: episodes %s, CPU time %s; used %ld episodes, %s CPU\n", be, bs,
	        r->episodes, pb_fmt_time(r->seconds, t, sizeof t));
}

void pb_rl_trainer_report(const pb_rl_trainer *T, pb_rl_report *r)
{
	r->start_method = T->cfg.init_state ? "script" : pb_rl_init_name(T->cfg.init);
	r->start_time = T->start_time;
	r->best_time = T->best_time;
	r->episodes = T->episodes;
	r->seconds = T->elapsed;
	r->beat_episode = T->beat_episode;
	r->beat_seconds = T->beat_seconds;
	r->budget_episodes = T->cfg.episodes > 0 ? T->cfg.episodes : 0;
	r->budget_seconds = T->cfg.seconds > 0 ? T->cfg.seconds : 0;
	r->lower_bound = T->lb;
	r->agent = T->agent;
}

int pb_rl_trainer_share(pb_rl_trainer *T, pb_rl_trainer *owner, pb_error *err)
{
	if (T == owner)
		return PB_OK;
	if (T->n != owner->n || T->pol->n_in != owner->pol->n_in ||
	    T->pol->n_hidden != owner->pol->n_hidden)
		return pb_err(err, PB_EUSAGE,
		              "rl: cannot share one network between %d and %d cores (or other "
		              "network sizes)",
		              T->n, owner->n);
	if (T->owner == T) {
		pb_rl_policy_free(T->pol);
		pb_rl_adam_free(&T->adam);
	}
	T->pol = owner->pol;
	T->owner = owner;
	return PB_OK;
}

int pb_rl_trainer_save(const pb_rl_trainer *T, const char *path, pb_error *err)
{
	return pb_rl_checkpoint_save(T->pol, T->n, T->owner->updates, path, err);
}

void pb_rl_trainer_free(pb_rl_trainer *T)
{
	if (!T)
		return;
	if (T->owner == T) {
		pb_rl_policy_free(T->pol);
		pb_rl_adam_free(&T->adam);
	}
	free(T->agent);
	free(T->init_state);
	free(T->state);
	free(T->best);
	free(T->gid);
	free(T->part_cores);
	free(T->next);
	free(T->cf);
	free(T->dh);
	free(T->acts);
	free(T->xs);
	free(T->hs);
	free(T->probs);
	free(T->rews);
	free(T->ret);
	free(T->adv);
	free(T->base);
	free(T->base_set);
	free(T->masks);
	free(T->am);
	free(T->groups);
	free(T->ctr);
	free(T->grad);
	free(T->gacc);
	free(T);
}
