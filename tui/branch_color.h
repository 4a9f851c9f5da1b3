/*
 * branch_color.h — colour by the kind of the parallel-branch group.
 */
#ifndef PB_TUI_BRANCH_COLOR_H
#define PB_TUI_BRANCH_COLOR_H

#include "state.h"

/* 1 when the view colours by branch group. */
int tui_branch_mode(const tui_app *a);
/* The loop's step: in branch mode, computes the branch groups when the
 * graph or layout changed since the last time (never while drawing).
 * Returns flags (PB_REDRAW_ALL when it computed). */
int tui_branch_refresh(tui_app *a);
/* Kind index of node's branch group (-1 outside every group, or when the
 * groups are not computed); *fused = 1 when fusion takes the node. */
int tui_branch_kind(const tui_app *a, int node, int *fused);
/* Short name of a kind (for box borders). */
const char *tui_branch_kind_name(const tui_app *a, int kind);
/* The legend: kinds with their group counts, or the reason there is none. */
const char *tui_branch_legend(const tui_app *a);
void tui_branch_free(tui_app *a);

#endif
