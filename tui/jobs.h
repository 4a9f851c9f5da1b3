/*
 * jobs.h — commands run in slices, so the workbench stays live.
 */
#ifndef PB_TUI_JOBS_H
#define PB_TUI_JOBS_H

#include "capture.h"

/* 1 when the command line (its first word) may run while a job is running:
 * navigation, selection, search, help. */
int tui_cmd_is_navigation(const char *line);
/* Starts a command as a job and runs its first slice; a command that ends
 * within it is finished at once (its flags or'ed into *flags). Returns its
 * status (PB_OK while it runs). */
int tui_job_start(tui_app *a, int argc, char **argv, const char *line, int *flags);
/* Runs the running job for one slice; finishes it when it ends. Returns
 * flags. */
int tui_job_pump(tui_app *a);
/* At exit on a signal: leaves the running job suspended for good. */
void tui_job_abandon(tui_app *a);
/* Asks the running job to stop (Esc, Ctrl-C). */
void tui_job_cancel(tui_app *a);
/* One line for the status bar while a job runs: spinner, command, elapsed
 * time, progress. */
void tui_job_status(tui_app *a, char *buf, size_t len);

#endif
