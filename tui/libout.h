/*
 * libout.h — library messages written to fd 2, caught for the output pane.
 */
#ifndef PB_TUI_LIBOUT_H
#define PB_TUI_LIBOUT_H

#include "state.h"

/* Points fd 2 at an unlinked temporary file for the whole session. */
void tui_libout_start(tui_app *a);
/* New text in it becomes "[lib]" lines of the output pane. */
void tui_libout_poll(tui_app *a);
/* Gives fd 2 back. */
void tui_libout_stop(tui_app *a);

#endif
