/*
 * tui_fallback.c — until the workbench TUI exists, `partbench MODEL` prints
 * the model summary (`info`) so that `make run` shows something useful.
 */
#include <stdio.h>
#include <string.h>

#include "tui.h"

int pb_tui_main(pb_cmd_ctx *ctx, int argc, char **argv, pb_error *err)
{
	char *args[64];
	int n = 0;
	args[n++] = "info";
	for (int i = 0; i < argc && n < 63; i++) {
		if (strcmp(argv[i], "--layout") == 0 || strcmp(argv[i], "-l") == 0) {
			i++; /* the layout is shown by the TUI, not by info */
			continue;
		}
		args[n++] = argv[i];
	}
	fprintf(ctx->log, "(the workbench TUI is not built yet: showing `partbench info`)\n");
	return pb_cmd_run_argv(ctx, n, args, err);
}
