/*
 * cmds/cmd_calibrate.c — `layout [FILE] --calibrate PROFILE [--model MODEL]`:
 * the layout's mac_rate fitted to an ONNX Runtime profile
 * (core/tune/layout_calibrate.h, docs/extract.md).
 */
#include "cmds/cmd_calibrate.h"

#include "tune/layout_calibrate.h"

int pb_cmd_layout_calibrate(pb_cmd_ctx *ctx, const pb_args *a, pb_error *err)
{
	const char *model = pb_args_str(a, "model", NULL);
	int rc;
	if (model && (rc = pb_session_open_model(ctx->s, model, NULL, 0, err)) != PB_OK)
		return rc;
	if (!ctx->s->graph)
		return pb_err(
		    err, PB_EUSAGE,
		    "layout --calibrate: give --model MODEL (the model the profile measured)");
	pb_calib_report r;
	rc = pb_layout_calibrate(ctx->s->graph, ctx->s->hw, pb_args_str(a, "calibrate", ""), &r,
	                         err);
	if (rc)
		return rc;
	if (pb_args_has(a, "json")) {
		json_t *j = pb_calib_report_json(&r);
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
		fputc('\n', ctx->out);
		json_decref(j);
	} else {
		pb_calib_report_print(&r, ctx->out);
	}
	pb_calib_report_free(&r);
	return PB_OK;
}

/* The fit is an option of `layout` (cmd_session.c): no command of its own. */
const pb_command pb_cmds_calibrate[] = {
    {0},
};
