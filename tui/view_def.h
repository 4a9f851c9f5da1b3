/*
 * view_def.h — what a view is: graph, groups, inspector, solver, output, and
 * the title and status bars are views. A view is one file defining a
 * constant tui_view_def and one line in views.c's table.
 *
 * A view draws from the state that commands, jobs and the loop computed
 * (the session, the view graph, the branch groups, the output ring); it
 * computes nothing heavy and runs no command: a click returns the command
 * string to run, which the mode that got the click runs.
 */
#ifndef PB_TUI_VIEW_DEF_H
#define PB_TUI_VIEW_DEF_H

#include "state.h"

/* Where a view sits: the screen is a title row, the canvas with a column of
 * side views stacked on its right, the bottom pane and the status row (the
 * last row is the modes' line). */
enum { TUI_AT_TITLE, TUI_AT_CANVAS, TUI_AT_SIDE, TUI_AT_BOTTOM, TUI_AT_STATUS };

typedef struct tui_view_def {
	const char *name;
	int at;     /* TUI_AT_* */
	int redraw; /* the flags that make it draw (0: every frame) */
	/* TUI_AT_SIDE: rows wanted out of the side column's avail (NULL: what
	 * the others leave; at most one such view) */
	int (*rows)(const tui_app *a, int avail);
	void (*draw)(tui_app *a, WINDOW *w);
	/* a click at (y, x) of w: fills cmd with a command line to run ("" for
	 * none); returns flags */
	int (*mouse)(tui_app *a, WINDOW *w, const MEVENT *ev, int y, int x, char *cmd, size_t n);
} tui_view_def;

#endif
