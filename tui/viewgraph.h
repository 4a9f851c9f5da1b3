/*
 * viewgraph.h — what the canvas shows: nodes or collapsed blocks, and their
 * layout (state.h's tui_viewgraph).
 */
#ifndef PB_TUI_VIEWGRAPH_H
#define PB_TUI_VIEWGRAPH_H

#include "state.h"

/* Rebuilds items from the session and view; starts a relayout when the
 * items, zoom or direction changed. Returns flags (PB_REDRAW_CANVAS). */
int tui_vg_update(tui_app *a);
/* Collects a finished dot layout; returns flags (PB_REDRAW_ALL | TUI_FIT)
 * when the layout changed, else 0. */
int tui_vg_poll(tui_app *a);
/* The item of node, or for a node in no drawn box (a hidden constant) the
 * next drawn item after it (where the constants are used), else the last
 * one before it; -1 when nothing is drawn. */
int tui_vg_item_near(const tui_app *a, int node);
/* Top-left cell of item i in layout (world) coordinates. */
void tui_vg_item_rect(const tui_app *a, int i, int *x, int *y);
void tui_vg_free(tui_viewgraph *vg);

#endif
