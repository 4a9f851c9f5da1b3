/*
 * cmds/cmd_calibrate.h — `layout --calibrate PROFILE` (the layout command of
 * cmd_session.c calls it; core/tune/layout_calibrate.h does the work).
 */
#ifndef PB_CMD_CALIBRATE_H
#define PB_CMD_CALIBRATE_H

#include "commands.h"

/* Options the layout command appends for --calibrate. */
#define PB_OPTS_CALIBRATE                                                                          \
	{"calibrate", 0, PB_OPT_STR, "PROFILE",                                                    \
	 "fit mac_rate to an ONNX Runtime profile of the model; report per op type"},              \
	{                                                                                          \
		"model", 0, PB_OPT_STR, "MODEL",                                                   \
		    "--calibrate: the model the profile measured (default: the open model)"        \
	}

/* Runs the fit for the session's layout and prints the report (text, or
 * JSON with --json). */
int pb_cmd_layout_calibrate(pb_cmd_ctx *ctx, const pb_args *a, pb_error *err);

#endif
