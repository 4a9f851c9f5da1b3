/*
 * shard/pipeline/pipeline_edit.c — hand edits of a `pipeline` plan (pipeline_edit.h):
 * a stage boundary moved, the plan made again with that split.
 *
 * The split is moved by pb_plan_move_boundary (every node between the two
 * positions in topological order moves, so an edge that went forward still
 * does), checked against the Lua rules the plan obeys, and planned by
 * pb_pipeline_plan with it given: micro-batches, batch and training flag are the
 * plan's, every stage is sharded again and the step time recomputed. The
 * message comes from the two plans (pipeline_diff.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "shard/pipeline/pipeline_edit.h"
#include "shard/pipeline/pipeline_plan.h"

int pb_pipeline_edit_boundary(const pb_graph *g, const pb_cluster *cl, const pb_pipe_opts *base,
                              const pb_plan *old, int k, int delta, pb_pipe_diff *res,
                              pb_error *err)
{
	memset(res, 0, sizeof *res);
	/* a dp x tp x pp plan (kind "pipeline" with a "dp" metric) is edited by
	 * dtp/dtp_edit.c, a sub-folder above this one */
	if (strcmp(old->kind, "pipeline") == 0 && pb_plan_has_metric(old, "dp"))
		return pb_err(err, PB_EUSAGE, "a dp x tp x pp plan: see pb_dtp_edit_boundary");
	int n = old->n_nodes;
	int *stage_of = malloc(((size_t)n + 1) * sizeof *stage_of);
	double *part = malloc(((size_t)n + 1) * sizeof *part);
	if (!stage_of || !part) {
		free(stage_of);
		free(part);
		return pb_err(err, PB_ENOMEM, "out of memory");
	}
	int rc = pb_plan_move_boundary(old, k, delta, stage_of, err);
	if (rc)
		pb_err_prefix(err, "stages");
	char why[400];
	for (int v = 0; v < n; v++)
		part[v] = old->group[v] >= 0 ? 0 : -1; /* the nodes of the split */
	if (rc == PB_OK && base->rules &&
	    pb_pipeline_stages_split_rule_broken(g, part, stage_of, old->group, base->rules, why,
	                                         sizeof why))
		rc = pb_err(
		    err, PB_EUSAGE,
		    "moving the boundary between stages %d and %d by %+d nodes breaks Lua %s", k,
		    k + 1, delta, why);
	free(part);
	pb_pipe_opts o = *base;
	const json_t *d = old->detail;
	o.stages = old->n_groups;
	o.batch = (long)json_number_value(json_object_get(d, "batch"));
	o.microbatches = (int)pb_plan_metric(old, "microbatches", 0);
	o.train = json_is_true(json_object_get(d, "train"));
	o.stage_of = stage_of;
	pb_pipe_result r = {0};
	if (rc == PB_OK)
		rc = pb_pipeline_plan(g, cl, &o, &r, err);
	free(stage_of);
	if (rc == PB_OK) {
		res->plan = r.plan;
		r.plan = NULL;
		pb_plan_set_method(res->plan, "manual");
		res->before = pb_plan_metric(old, "step_time", NAN);
		res->after = r.step_time;
		pb_pipeline_diff_describe(old, res->plan, res->what, sizeof res->what);
	}
	pb_pipeline_plan_result_free(&r);
	return rc;
}
