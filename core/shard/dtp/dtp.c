/*
 * shard/dtp/dtp.c — the entry points of the data x tensor x pipeline search
 * (dtp.h): the even search (dtp_search.c), then the configurations
 * with uneven device groups grown from its best rows (dtp_uneven.c); the
 * plan of a row from the part that found it. Kept apart so that neither
 * part calls the other's entry point.
 */
#include "shard/dtp/dtp.h"
#include "shard/dtp/dtp_plan.h"
#include "shard/dtp/dtp_uneven.h"

int pb_dtp_search(const pb_graph *g, const pb_cluster *cl, const pb_dtp_opts *o, pb_dtp_result *r,
                  pb_error *err)
{
	int rc = pb_dtp_search_even(g, cl, o, r, err);
	if (rc)
		return rc;
	const pb_graph *gl = r->g;
	return pb_dtp_uneven_search(&gl, cl, o, r->batch, r, err);
}

int pb_dtp_plan(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                const pb_dtp_config *want, long B, pb_dtp_result *r, pb_plan **out, pb_error *err)
{
	*out = NULL;
	if (!pb_dtp_plan_unit_row(want) || !want->ok)
		return pb_err(err, PB_EUSAGE, "shard: no pipeline configuration to plan");
	if (want->uneven)
		return pb_dtp_uneven_plan(gp, cl, o, want, B, r, out, err);
	/* r->kept may be an uneven row's plan (dtp_uneven.c) */
	return pb_dtp_search_plan_even(gp, cl, o, want, B, r && r->kept_cfg.uneven ? NULL : r, out,
	                               err);
}
