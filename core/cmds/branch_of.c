/*
 * branch_of.c — the session's branch groups as a plan (branch_of.h).
 */
#include "cmds/branch_of.h"
#include "script/hooks.h"
#include "transform/fuse.h"

int pb_branch_plan_of(pb_session *s, pb_plan **out, pb_error *err)
{
	*out = NULL;
	pb_fuse_opts o;
	pb_fuse_opts_default(&o);
	const pb_fuse_rules *session_rules = pb_fuse_rules_of(s);
	if (!session_rules)
		return pb_err(err, PB_ENOMEM, "branch groups: out of memory");
	pb_fuse_rules rules = *session_rules;
	o.rules = &rules;
	int rc = pb_fuse_model_from_hw(s->hw, &o.model, err);
	if (rc)
		return rc;
	pb_hooks hk;
	pb_hooks_init(&hk, s);
	pb_hooks_fuse(&hk, &rules);
	pb_fuse_result *r = NULL;
	rc = pb_hooks_finish(&hk, pb_fuse_run(s->graph, &o, &r, err), err);
	if (rc == PB_OK && !(*out = pb_branch_plan(s->graph, r, &o)))
		rc = pb_err(err, PB_ENOMEM, "branch groups: out of memory");
	pb_fuse_result_free(r);
	return rc;
}
