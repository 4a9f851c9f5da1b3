/*
 * signals.h — SIGTERM / SIGHUP and crashes: the recovery session.
 */
#ifndef PB_TUI_SIGNALS_H
#define PB_TUI_SIGNALS_H

#include "state.h"

#define TUI_DEFAULT_SESSION "partbench-session.json"

/* SIGTERM and SIGHUP raise a flag that the loop reads; a crash signal
 * writes the recovery bytes armed for the running job. */
void tui_signals_install(void);
/* Also reports SIGHUP when the terminal has hung up. The loop leaves when
 * it is non-zero. */
int tui_signal_pending(void);
/* Writes the recovery session (path gets its name) when there are unsaved
 * changes: 0 written, 1 nothing to write, -1 failed. */
int tui_recover_write(tui_app *a, char *path, size_t len);
/* Before a job starts: the recovery bytes that a crash inside it writes (the
 * session now, when it has unsaved changes); after it ends: none. */
void tui_recover_arm(tui_app *a);
void tui_recover_disarm(void);
/* The recovery file of a session file (NULL: the default one). */
void tui_recovery_path(const char *session, char *buf, size_t len);

#endif
