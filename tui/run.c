/*
 * run.c — a command line from a key, the ':' line, a click or the camera,
 * run through the command table (the same as the CLI's).
 *
 * Navigation commands run at once, nested inside a running job if there is
 * one; any other command starts as a job (jobs.c) and, while one runs, is
 * refused with a message. The job mode (mode_job.c) is pushed while a job
 * runs. The caller gets the redraw flags back and returns them to the loop.
 */
#include "run.h"
#include "jobs.h"
#include "mode_job.h"
#include "output.h"

static int run_common(tui_app *a, int argc, char **argv, const char *line, int *rcp)
{
	const char *first = line ? line : argc > 0 ? argv[0] : "";
	int nav = tui_cmd_is_navigation(first), flags = 0, rc;
	if (a->job && !nav) {
		tui_out(a, 1,
		        "busy: a job is running (Esc or Ctrl-C cancels it; navigation, "
		        "?, / and o keep working)");
		rc = PB_EUSAGE;
	} else if (!nav && a->run_depth == 0) {
		a->cmd_gen++; /* what the loop keeps may be stale (a script's rules) */
		rc = tui_job_start(a, argc, argv, line, &flags);
		if (a->job)
			tui_job_mode_enter(a);
	} else {
		tui_capture c;
		tui_capture_begin(a, &c);
		pb_error err = {0};
		a->run_depth++;
		rc = line ? pb_cmd_run_line(a->ctx, line, &err)
		          : pb_cmd_run_argv(a->ctx, argc, argv, &err);
		a->run_depth--;
		if (!a->job)
			a->progress[0] = 0;
		flags = tui_capture_end(a, &c, rc, &err);
	}
	if (rcp)
		*rcp = rc;
	return flags;
}

int tui_run(tui_app *a, const char *line, int *rc)
{
	return run_common(a, 0, NULL, line, rc);
}

int tui_run_argv(tui_app *a, int argc, char **argv, int *rc)
{
	return run_common(a, argc, argv, NULL, rc);
}
