/*
 * recover.h — the start-up offer of a recovery session.
 */
#ifndef PB_TUI_RECOVER_H
#define PB_TUI_RECOVER_H

#include "state.h"

/* At start: when a recovery session of the open model exists, asks (ask
 * mode, the screen keeps working meanwhile) to restore it (r), delete it (d)
 * or leave it (Esc). */
void tui_recover_offer(tui_app *a, const char *session_arg);

#endif
