/*
 * spec_cands.h — the selected operator's candidate specs on a shard plan
 * (cmds/spec_cands.h), kept for the inspector: it lists them, a drag of the
 * operator's box onto a row pins that spec, and '[' ']' move the row that
 * '=' pins (`pin --node NAME --spec LABEL`, an edit with undo like any).
 */
#ifndef PB_TUI_SPEC_CANDS_H
#define PB_TUI_SPEC_CANDS_H

#include "state.h"

/* The loop's step: recomputes the candidates when the plan, the layout or
 * the selection changed (not while a job runs). Returns redraw flags. */
int tui_cands_refresh(tui_app *a);
void tui_cands_free(tui_app *a);
/* The candidates of node nid when kept for the current plan, else NULL. */
const tui_cands *tui_cands_of(const tui_app *a, int nid);
/* Moves the cursor by d rows (clamped); returns flags. */
int tui_cands_move(tui_app *a, int d);
/* Row k of the candidates as the pin command of node nid; 0 when there is
 * none (why written to why). */
int tui_cands_pin_line(const tui_app *a, int nid, int k, char *line, size_t n, char *why,
                       size_t wn);
/* The candidate row the inspector drew at window row y, or -1. */
int tui_cands_row_at(const tui_app *a, int y);

#endif
