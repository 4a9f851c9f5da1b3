/*
 * tui.h — the workbench front end (ncurses). Only tui/ includes curses.
 */
#ifndef PB_TUI_H
#define PB_TUI_H

#include "commands.h"

#define PB_VERSION "0.1.0"

/* Opens the workbench: argv holds [MODEL] [--layout FILE] [--input ...]. */
int pb_tui_main(pb_cmd_ctx *ctx, int argc, char **argv, pb_error *err);

#endif
