/*
 * cmds/cmd_calibrate.h — `layout --calibrate PROFILE` (the layout command of
 * cmd_session.c calls it; core/tune/layout_calibrate.h does the work).
 */
#ifndef PB_CMD_CALIBRATE_H
#define PB_CMD_CALIBRATE_H

#include "commands.h"

/* Options the layout command appends for --calibrate. */
#define PB_OPTS_CALIBRATE                                                                          \
	{.name = "calibrate",                                                                      \
	 .type = PB_OPT_STR,                                                                       \
	 .metavar = "PROFILE",                                                                     \
	 .help = "fit mac_rate to an ONNX Runtime profile of the model; report per op type",       \
	 .path = "r:data"},                                                                        \
	{                                                                                          \
		.name = "model", .type = PB_OPT_STR, .metavar = "MODEL",                           \
		.help = "--calibrate: the model the profile measured (default: the open model)",   \
		.path = "r:model s"                                                                \
	}

/* Runs the fit for the session's layout and prints the report (text, or
 * JSON with --json). */
int pb_cmd_layout_calibrate(pb_cmd_ctx *ctx, const pb_args *a, pb_error *err);

#endif
