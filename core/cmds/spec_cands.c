/*
 * spec_cands.c — an operator's candidate specs on the session's shard plan
 * (spec_cands.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cmds/spec_cands.h"
#include "script/hooks.h"

int pb_spec_cands_of(pb_session *s, int nid, pb_spec_cand **out, int *n, pb_error *err)
{
	*out = NULL;
	*n = 0;
	if (!s->graph || !s->plan || strcmp(s->plan->kind, "shard") != 0 || !s->hw)
		return pb_err(err, PB_EUSAGE, "candidate specs need a 'shard' plan and its layout");
	if (nid < 0 || nid >= s->graph->n_nodes)
		return pb_err(err, PB_EUSAGE, "no node %d", nid);
	pb_cluster cl;
	int rc = pb_cluster_from_hw(s->hw, &cl, err);
	if (rc)
		return rc;
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	pb_hooks hk;
	pb_hooks_init(&hk, s);
	rc = pb_hooks_shard(&hk, &o, err);
	if (rc == PB_OK)
		rc = pb_spec_pin_candidates(s->graph, &cl, &o, s->plan, nid, out, n, err);
	rc = pb_hooks_finish(&hk, rc, err);
	if (rc) { /* a Lua filter failed while marking */
		free(*out);
		*out = NULL;
		*n = 0;
	}
	pb_cluster_free(&cl);
	return rc;
}
