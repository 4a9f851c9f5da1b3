/*
 * views.h — the registry of views (views.c): their windows, drawing by
 * flags, clicks. The views themselves: view_def.h.
 */
#ifndef PB_TUI_VIEWS_H
#define PB_TUI_VIEWS_H

#include "view_def.h"

/* The views' windows for the terminal's size (after start and KEY_RESIZE). */
void tui_views_layout(tui_app *a);
/* Draws the views whose flags are in flags (all when too small), with
 * wnoutrefresh; the caller flushes. */
void tui_views_draw(tui_app *a, int flags);
/* Gives a mouse event to the view under it; returns flags, cmd as above. */
int tui_views_mouse(tui_app *a, const MEVENT *ev, char *cmd, size_t n);
void tui_views_free(tui_app *a);

extern const tui_view_def tui_view_title, tui_view_graph, tui_view_groups, tui_view_inspector,
    tui_view_solver, tui_view_output, tui_view_status, tui_view_chip;

#endif
