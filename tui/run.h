/*
 * run.h — running a command line of the command table from the workbench.
 */
#ifndef PB_TUI_RUN_H
#define PB_TUI_RUN_H

#include "state.h"

/* Runs a command line: navigation (view, find, help) at once, anything else
 * as a job (refused while another runs). Output goes to the output pane.
 * Returns the redraw flags for the loop; *rc (may be NULL) gets the status. */
int tui_run(tui_app *a, const char *line, int *rc);
int tui_run_argv(tui_app *a, int argc, char **argv, int *rc);

#endif
