/*
 * mode_job.c — the job mode (mode_job.h): between events it runs the job's
 * next slice (its idle handler), whatever mode is above it; Esc and Ctrl-C
 * cancel the job, q says how to stop it first, every other key passes to
 * the normal mode below (navigation works; other commands are refused by
 * run.c). It leaves the stack when the job ends.
 */
#include "mode_job.h"
#include "jobs.h"
#include "output.h"

static int job_key(tui_app *a, void *data, int key, int code)
{
	(void)data;
	if (!code && (key == 27 || key == 3)) {
		tui_job_cancel(a);
		return PB_REDRAW_STATUS;
	}
	if (!code && key == 'q') {
		tui_out(a, 1, "a job is running: Esc or Ctrl-C cancels it first");
		return 0;
	}
	return TUI_PASS;
}

static int job_idle(tui_app *a, void *data)
{
	(void)data;
	int flags = tui_job_pump(a);
	if (!a->job)
		tui_mode_remove(a, &tui_mode_job);
	return flags;
}

const tui_mode tui_mode_job = {.name = "job", .key = job_key, .idle = job_idle};

void tui_job_mode_enter(tui_app *a)
{
	if (!tui_mode_on(a, &tui_mode_job))
		tui_mode_push(a, &tui_mode_job, NULL);
}
