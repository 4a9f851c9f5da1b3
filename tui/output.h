/*
 * output.h — the output pane's ring of lines (state.h's tui_outline).
 */
#ifndef PB_TUI_OUTPUT_H
#define PB_TUI_OUTPUT_H

#include "state.h"

/* Adds text (one or more lines); a line equal to the newest one (same text,
 * both errors or both not) is not added again: the newest one's count goes
 * up, and the pane shows it once with "x N". */
void tui_out_add(tui_app *a, int is_err, const char *text);
void tui_out(tui_app *a, int is_err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The r-th of the last n lines kept (r = 0 the oldest of them); NULL past the end. */
const tui_outline *tui_out_line(const tui_app *a, int n, int r);
/* The line as shown: its text, and " … ×N" when it was repeated. */
void tui_out_format(const tui_app *a, const tui_outline *l, char *buf, size_t len);
/* The last n lines as shown, one per row, for the pager (malloc'ed). */
char *tui_out_text(const tui_app *a, long n);
void tui_out_free(tui_app *a);

#endif
