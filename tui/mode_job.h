/*
 * mode_job.h — the job mode: on the stack while a command runs in slices.
 */
#ifndef PB_TUI_MODE_JOB_H
#define PB_TUI_MODE_JOB_H

#include "mode.h"

/* Pushes the job mode (under any line or pager mode on top). */
void tui_job_mode_enter(tui_app *a);
extern const tui_mode tui_mode_job;

#endif
