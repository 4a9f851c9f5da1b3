/*
 * shard/dtp/dtp_polish.c — the boundary polish of the pipeline `shard
 * --pipeline auto` keeps (dtp_polish.h, pb_dtp_polish).
 *
 * The search splits the model into pp x V chunks at layer boundaries (or by
 * the key-operator MILP on FLOPs) and costs each configuration on that
 * split. As in `pipeline` (pipeline_polish.c), what the split does not see
 * is in the costing: the collectives of each chunk's sharding, the bytes
 * crossing each chunk boundary. So the kept configuration's split is
 * polished by single-node chunk-boundary moves (boundary_climb.c), each
 * costed by the search's own costing (pb_dtp_search_unit_eval: the changed chunks
 * solved again, the others answered by the chunk cache; the p2p bytes
 * again); a move is kept when the plan fits no worse and its step time
 * drops by more than a relative 1e-9. A move whose chunk cannot beat the
 * current step time is cut by the stage MILPs' cutoff (as the search prunes).
 * dp, tp, pp, m and the schedule stay the row's; only the split changes.
 * Moves that break a Lua cut or stage rule are not tried.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shard/pipeline/boundary_climb.h"
#include "shard/pipeline/pipeline_report.h"
#include "shard/dtp/dtp_polish.h"
#include "shard/dtp/dtp_plan.h"
#include "shard/dtp/dtp_search.h"

typedef struct dpolish {
	pb_dtp_unit *u;
	pb_dtp_config cur; /* the configuration on u->split */
} dpolish;

static int better(const pb_dtp_config *a, const pb_dtp_config *b)
{
	if (!a->ok)
		return 0;
	if (a->fits != b->fits)
		return a->fits;
	return a->step_time < b->step_time * (1 - 1e-9);
}

/* pb_climb_try_fn: costs the split cand with the row's dp and tp. */
static int try_move(void *ud, const int *cand, int k, int dir, int *costed, int *kept,
                    pb_error *err)
{
	dpolish *dp = ud;
	pb_dtp_unit *u = dp->u;
	(void)k;
	(void)dir;
	pb_pipe_split next, old = u->split;
	pb_error e2 = {0};
	char why[256];
	if (u->o->pipe.rules && pb_pipeline_stages_split_rule_broken(
	                            u->g, u->cost, cand, NULL, u->o->pipe.rules, why, sizeof why))
		return PB_OK; /* breaks a Lua rule: not a move */
	if (pb_pipeline_stages_split_given(u->g, u->cost, u->n_chunks, cand, &next, &e2) != PB_OK)
		return PB_OK; /* an edge would go backwards: not a move */
	*costed = 1;
	u->split = next;
	pb_dtp_search_unit_bytes(u);
	pb_dtp_config c;
	memset(&c, 0, sizeof c);
	int rc = pb_dtp_search_unit_eval(u, dp->cur.dp, dp->cur.tp,
	                                 dp->cur.fits ? dp->cur.step_time : 0, &c, err);
	if (rc == PB_OK && better(&c, &dp->cur)) {
		pb_pipeline_stages_split_free(&old);
		dp->cur = c;
		*kept = 1;
		return PB_OK;
	}
	pb_pipeline_stages_split_free(&u->split);
	u->split = old;
	pb_dtp_search_unit_bytes(u);
	return rc;
}

/* The plan of u's split (every chunk's solve recorded), the polish in its
 * detail. */
static int rebuild(pb_dtp_unit *u, long B, const pb_dtp_polish_info *info, pb_plan **out,
                   pb_error *err)
{
	pb_dtp_config c;
	memset(&c, 0, sizeof c);
	if (pb_dtp_search_unit_record(u, err))
		return PB_ENOMEM;
	int rc = pb_dtp_search_unit_eval(u, info->dp, info->tp, 0, &c, err);
	if (rc == PB_OK && (!c.ok || fabs(c.step_time - info->after) > 1e-9 * info->after))
		rc = pb_err(err, PB_EINPUT, "shard: the polished pipeline costs %.9g s, not %.9g s",
		            c.step_time, info->after);
	if (rc == PB_OK)
		rc = pb_dtp_plan_build(u->g, u->cl, &c, B, u->o->pipe.train, u->split.stage,
		                       u->chunks, out, err);
	json_decref(u->chunks);
	u->chunks = NULL;
	return rc;
}

int pb_dtp_polish(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                  const pb_dtp_config *want, long B, pb_plan **plan, pb_dtp_polish_info *info,
                  pb_error *err)
{
	memset(info, 0, sizeof *info);
	info->before = info->after = want->step_time;
	info->dp = want->dp;
	info->tp = want->tp;
	int tries = o->pipe.polish_tries;
	if (tries < 0 || want->uneven || want->pp < 2 || !*plan)
		return PB_OK;
	int rc;
	if ((rc = pb_dtp_search_reload(o, B / want->m, gp, err)))
		return rc;
	pb_dtp_unit u;
	double *cost = NULL;
	if ((rc = pb_dtp_search_unit_open(&u, *gp, cl, o, want->pp, want->m, &cost, err)))
		goto done;
	u.sched = want->sched;
	u.v = want->v;
	u.n_chunks = want->pp * want->v;
	u.layers_split = want->layers_split;
	u.min_layers = want->min_layers;
	u.max_layers = want->max_layers;
	if ((*plan)->n_nodes != (*gp)->n_nodes) {
		rc = pb_err(err, PB_EINPUT, "shard: the pipeline plan is not of this model");
		goto done;
	}
	if ((rc = pb_pipeline_stages_split_given(*gp, cost, u.n_chunks, (*plan)->group, &u.split,
	                                         err)))
		goto done;
	pb_dtp_search_unit_bytes(&u);
	dpolish ps = {.u = &u};
	if ((rc = pb_dtp_search_unit_eval(&u, want->dp, want->tp, 0, &ps.cur, err)))
		goto done;
	if (!ps.cur.ok) { /* the row's plan does not cost again: leave it */
		rc = pb_err(err, PB_EINPUT, "shard: the kept pipeline does not cost again: %s",
		            ps.cur.error);
		goto done;
	}
	info->polished = 1;
	info->before = ps.cur.step_time;
	pb_climb_stats st;
	rc = pb_boundary_climb(&u.split.stage, (*gp)->n_nodes, u.n_chunks,
	                       tries ? tries : 8 * u.n_chunks + 8, try_move, &ps, &st, err);
	info->moves = st.moves;
	info->tries = st.tries;
	info->converged = st.converged;
	info->after = ps.cur.step_time;
	pb_plan *np = NULL;
	if (rc == PB_OK && st.moves > 0 && (rc = rebuild(&u, B, info, &np, err)) == PB_OK) {
		pb_plan_free(*plan);
		*plan = np;
	}
	if (rc == PB_OK)
		json_object_set_new((*plan)->detail, "polish", pb_dtp_polish_json(info));
done:
	pb_dtp_search_unit_close(&u, cost);
	return rc;
}

json_t *pb_dtp_polish_json(const pb_dtp_polish_info *info)
{
	return json_pack("{s:i,s:i,s:b,s:f,s:f}", "moves", info->moves, "tries", info->tries,
	                 "converged", info->converged, "step_time_before", info->before,
	                 "step_time", info->after);
}

void pb_dtp_polish_text(FILE *f, const pb_dtp_polish_info *info)
{
	if (info->polished)
		pb_pipeline_report_polish_line(f, "chunk-boundary", info->moves, info->tries,
		                               info->before, info->after, info->converged);
}
