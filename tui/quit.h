/*
 * quit.h — leaving the workbench without losing work, and Ctrl-Z.
 */
#ifndef PB_TUI_QUIT_H
#define PB_TUI_QUIT_H

#include "state.h"

/* Quits, first asking save / discard / cancel when the session has unsaved
 * changes; confirm: also ask "quit?" when it has none (Ctrl-C). Returns
 * flags (PB_QUIT when it quits at once). */
int tui_quit_ask(tui_app *a, int confirm);
/* Ctrl-Z: leaves curses, stops the process, restores the screen on resume. */
int tui_suspend(tui_app *a);

#endif
