/*
 * method_rl.c — `--method rl`: the REINFORCE agent (rl_reinforce.h) from
 * --init or a Lua initial partition, optionally from a checkpoint (the
 * layout's shipped agent by default). It never reads the exact reference.
 * Under rules its action mask forbids actions that break more rules than the
 * state does, and it starts from greedy (which obeys the cut rules); its best
 * is polished by the rule-aware search at the end. One unit of a step is one
 * episode.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition/chain/baselines.h"
#include "partition/chain/chain_rules.h"
#include "partition/chain/env.h"
#include "partition/methods/method.h"
#include "partition/rl/rl_reinforce.h"
#include "partition/chain/rule_search.h"

extern const pb_part_method pb_part_method_rl;

typedef struct rl_state {
	pb_rl_trainer *rl;
	/* rules (chain_rules.h): the agent's mask composes the Lua mask with one
	 * that forbids actions breaking more rules than the state does */
	pb_action_mask_fn user_mask;
	void *user_mask_ud;
	int *mask_next;
	pb_part_problem *P;
} rl_state;

/* The agent's mask under rules: an action may not break more rules than the
 * state already does (so a state that obeys them stays obeying). */
static int rules_mask(void *ud, const int *ac, int n, unsigned char *mask)
{
	rl_state *rs = ud;
	if (rs->user_mask && rs->user_mask(rs->user_mask_ud, ac, n, mask) != 0)
		return 1;
	pb_part_eval ev;
	pb_part_evaluate(rs->P, ac, &ev, NULL);
	for (int k = 0; k < pb_env_n_actions(n); k++) {
		if (!mask[k])
			continue;
		memcpy(rs->mask_next, ac, (size_t)n * sizeof *ac);
		if (!pb_part_rules_apply(rs->P, rs->mask_next, k, NULL))
			continue;
		pb_part_eval e2;
		pb_part_evaluate(rs->P, rs->mask_next, &e2, NULL);
		if (e2.violations > ev.violations)
			mask[k] = 0;
	}
	return 0;
}

static int rl_start(pb_part_run *r, const pb_hw *hw, const pb_part_opts *o, pb_error *err)
{
	rl_state *rs = calloc(1, sizeof *rs);
	if (!rs)
		return pb_err(err, PB_ENOMEM, "partition: out of memory");
	r->state = rs;
	rs->P = r->P;
	int n = r->P->n, rc = PB_OK;
	pb_rl_config cfg;
	pb_rl_config_default(&cfg);
	/* --seconds alone is a time budget: no episode cap then. */
	cfg.episodes = o->episodes > 0 ? o->episodes : o->seconds > 0 ? 0 : cfg.episodes;
	cfg.seed = o->seed;
	cfg.seconds = o->seconds;
	cfg.init = o->init ? pb_rl_init_parse(o->init) : PB_RL_INIT_BALANCED;
	if (cfg.init < 0)
		rc = pb_err(err, PB_EUSAGE,
		            "partition: --init must be one of " PB_RL_INIT_NAMES ", got '%s'",
		            o->init);
	char dflt[1024];
	const char *agent = o->agent;
	if (agent && strcmp(agent, "none") == 0)
		agent = NULL;
	else if (!agent && hw->path &&
	         pb_partition_default_agent(hw->path, n, dflt, (int)sizeof dflt))
		agent = dflt;
	cfg.mask = o->mask;
	cfg.mask_ud = o->mask_ud;
	cfg.init_state = o->init_state;
	if (pb_part_has_rules(r->P)) {
		rs->user_mask = o->mask;
		rs->user_mask_ud = o->mask_ud;
		rs->mask_next = malloc((size_t)n * sizeof *rs->mask_next);
		if (!rs->mask_next)
			rc = pb_err(err, PB_ENOMEM, "partition: out of memory");
		cfg.mask = rules_mask;
		cfg.mask_ud = rs;
		/* start where the rules hold: greedy obeys the cut rules */
		if (!o->init_state) {
			pb_part_greedy(r->P, r->ac);
			cfg.init_state = r->ac;
		}
	}
	if (!rc)
		rc = pb_rl_trainer_new(r->P, &cfg, agent, &rs->rl, err);
	if (!rc)
		memcpy(r->ac, pb_rl_trainer_best(rs->rl), (size_t)n * sizeof *r->ac);
	return rc;
}

static int rl_step(pb_part_run *r, int budget, pb_solver_progress *p, double *bound,
                   double *fraction, pb_error *err)
{
	rl_state *rs = r->state;
	int rc = pb_rl_trainer_step(rs->rl, budget, err);
	if (rc)
		return rc;
	p->improved = pb_part_run_offer(r, pb_rl_trainer_best(rs->rl));
	r->iters = pb_rl_trainer_episodes(rs->rl);
	r->done = pb_rl_trainer_done(rs->rl);
	/* the agent's best polished under rules or the weighted objective */
	if (r->done && pb_part_rsearch_wanted(r->P)) {
		memcpy(r->scratch, r->ac, (size_t)r->P->n * sizeof *r->ac);
		if (pb_part_rsearch(r->P, r->scratch, NULL))
			p->improved |= pb_part_run_offer(r, r->scratch);
	}
	*fraction = pb_rl_trainer_fraction(rs->rl);
	return PB_OK;
}

/* What the agent added to its start. */
static void rl_note(pb_part_run *r, char *buf, size_t len)
{
	rl_state *rs = r->state;
	pb_rl_report rep;
	pb_rl_trainer_report(rs->rl, &rep);
	if (rep.beat_episode >= 0)
		snprintf(buf, len, ", start %s %+.1f%% (ep %ld)", rep.start_method,
		         100 * (rep.best_time / rep.start_time - 1), rep.beat_episode);
	else
		snprintf(buf, len, ", start %s not beaten", rep.start_method);
}

static void rl_stats(pb_part_run *r, FILE *out)
{
	pb_rl_trainer_stats(((rl_state *)r->state)->rl, out);
}

static void rl_free(pb_part_run *r)
{
	rl_state *rs = r->state;
	if (!rs)
		return;
	pb_rl_trainer_free(rs->rl);
	free(rs->mask_next);
	free(rs);
}

int pb_partition_solver_rl_report(pb_solver *s, struct pb_rl_report *rep)
{
	pb_part_run *r = pb_part_run_of(s);
	if (!r || r->method != &pb_part_method_rl || !r->state || !((rl_state *)r->state)->rl)
		return 0;
	pb_rl_trainer_report(((rl_state *)r->state)->rl, rep);
	return 1;
}

const pb_part_method pb_part_method_rl = {
    .name = "rl",
    .summary = "the REINFORCE agent from --init (or the layout's shipped agent); reports "
               "what it added to its start",
    .options = "episodes seconds agent init seed",
    .unit = "episodes",
    .key = 'R',
    .flags = PB_PART_M_MASK | PB_PART_M_STEPPED,
    .start = rl_start,
    .step = rl_step,
    .note = rl_note,
    .stats = rl_stats,
    .free = rl_free,
};
