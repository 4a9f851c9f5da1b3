/*
 * views.h — the registered views: graph, groups, inspector, solver, output,
 * and the title and status bars. A view is one file defining a constant
 * tui_view_def and one line in views.c's table.
 *
 * A view draws from the state that commands, jobs and the loop computed
 * (the session, the view graph, the branch groups, the output ring); it
 * computes nothing heavy and runs no command: a click returns the command
 * string to run, which the mode that got the click runs.
 */
#ifndef PB_TUI_VIEWS_H
#define PB_TUI_VIEWS_H

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

/* The views' windows for the terminal's size (after start and KEY_RESIZE). */
void tui_views_layout(tui_app *a);
/* Draws the views whose flags are in flags (all when too small), with
 * wnoutrefresh; the caller flushes. */
void tui_views_draw(tui_app *a, int flags);
/* Gives a mouse event to the view under it; returns flags, cmd as above. */
int tui_views_mouse(tui_app *a, const MEVENT *ev, char *cmd, size_t n);
void tui_views_free(tui_app *a);

extern const tui_view_def tui_view_title, tui_view_graph, tui_view_groups, tui_view_inspector,
    tui_view_solver, tui_view_output, tui_view_status;

#endif
