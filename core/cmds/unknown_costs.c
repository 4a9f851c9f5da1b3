/*
 * unknown_costs.c — the unknown-costs warning of the planning commands
 * (unknown_costs.h).
 */
#include "cmds/unknown_costs.h"
#include "shape/shape.h"

void pb_cmd_warn_unknown_costs(pb_cmd_ctx *ctx, const pb_graph *g)
{
	char unres[256];
	if (g && g->n_unknown_shapes && pb_shape_unresolved_inputs(g, unres, sizeof unres))
		fprintf(ctx->log,
		        "warning: %s: costs unknown (input dims without a value: %s); rerun with "
		        "--input NAME=DIMS\n",
		        g->path, unres);
}
