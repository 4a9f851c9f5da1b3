/*
 * jobs.c — commands run in slices, so the workbench stays live.
 *
 * Every command that is not navigation starts as a job (util/job.h): its
 * handler runs on the job's coroutine and yields at the ticks of the long
 * loops it goes through (solver steps, progress reports, loaders) once a
 * slice of JOB_SLICE seconds has passed. Between slices the loop reads keys
 * and redraws, in whatever mode is on top (the job mode, mode_job.c, runs
 * the slices): navigation commands run at once, Esc and Ctrl-C cancel the
 * job, other commands are refused while it runs. A command that ends within
 * its first slice is finished before tui_run returns, as if it had run
 * directly. Finishing returns the command's redraw flags to the caller.
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobs.h"
#include "output.h"
#include "signals.h"
#include "util/fmt.h"
#include "util/job.h"

#define JOB_SLICE 0.025

struct tui_job {
	tui_app *a;
	pb_job *job;
	char *line; /* the command line, or NULL with argv */
	int argc;
	char **argv; /* copies */
	char title[64];
	tui_capture cap;
	pb_error err;
	int rc;
	int cancelled;
	double cancel_wall, cancel_cpu; /* when the first Esc / Ctrl-C was read */
};

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int tui_cmd_is_navigation(const char *line)
{
	static const char *const nav[] = {"view", "find", "help"};
	line += strspn(line, " \t");
	size_t n = strcspn(line, " \t");
	for (size_t i = 0; i < sizeof nav / sizeof nav[0]; i++)
		if (strlen(nav[i]) == n && strncmp(line, nav[i], n) == 0)
			return 1;
	return 0;
}

/* Tests only (tests/e2e/tui_crash.sh): PB_TEST_CRASH=SIG:WORD crashes the job
 * of a command starting with WORD, on its coroutine, with SEGV (a write
 * through a null pointer), BUS, FPE or ABRT, so that the crash path is run
 * for real. */
static void test_crash(const tui_job *j)
{
	const char *spec = getenv("PB_TEST_CRASH"), *colon = spec ? strchr(spec, ':') : NULL;
	if (!colon || !colon[1] || strncmp(j->title, colon + 1, strlen(colon + 1)) != 0)
		return;
	if (strncmp(spec, "SEGV:", 5) == 0)
		/* address 64: not mapped, and aligned and not NULL, so that UBSan lets
		 * the store reach the MMU under make asan */
		*(volatile int *)((uintptr_t)pb_job_running() * 64) = 0;
	else if (strncmp(spec, "BUS:", 4) == 0)
		raise(SIGBUS);
	else if (strncmp(spec, "FPE:", 4) == 0)
		raise(SIGFPE);
	else if (strncmp(spec, "ABRT:", 5) == 0)
		abort();
}

static void body(void *arg)
{
	tui_job *j = arg;
	pb_cmd_ctx *ctx = j->a->ctx;
	test_crash(j);
	j->rc = j->line ? pb_cmd_run_line(ctx, j->line, &j->err)
	                : pb_cmd_run_argv(ctx, j->argc, j->argv, &j->err);
}

static void job_free(tui_job *j)
{
	pb_job_free(j->job);
	free(j->line);
	for (int i = 0; i < j->argc; i++)
		free(j->argv[i]);
	free(j->argv);
	free(j);
}

static int finish(tui_app *a)
{
	tui_job *j = a->job;
	double secs = pb_job_elapsed(j->job);
	a->job = NULL;
	tui_recover_disarm();
	a->progress[0] = 0;
	int flags = tui_capture_end(a, &j->cap, j->rc, &j->err);
	if (j->cancelled) {
		/* how long the job took to stop once the key was read (wall and this
		 * process's CPU: tests/e2e/tui_jobs.sh checks the CPU, which load
		 * does not stretch) */
		char t[32];
		int w = strlen(j->title) > 40 ? 37 : 40; /* the line fits the output pane */
		tui_out(a, 1,
		        "cancelled '%.*s%s' after %s (stopped %.0f ms after the key, %.0f ms CPU)",
		        w, j->title, w < 40 ? "..." : "", pb_fmt_time(secs, t, sizeof t),
		        (tui_now() - j->cancel_wall) * 1e3, (cpu_now() - j->cancel_cpu) * 1e3);
	}
	job_free(j);
	return flags | PB_REDRAW_ALL;
}

int tui_job_pump(tui_app *a)
{
	if (!a->job || a->run_depth > 0)
		return 0;
	if (pb_job_resume(a->job->job, JOB_SLICE))
		return finish(a);
	return PB_REDRAW_STATUS;
}

int tui_job_start(tui_app *a, int argc, char **argv, const char *line, int *flags)
{
	tui_job *j = calloc(1, sizeof *j);
	if (!j) {
		tui_out(a, 1, "error: out of memory");
		return PB_ENOMEM;
	}
	j->a = a;
	if (line) {
		j->line = strdup(line);
		snprintf(j->title, sizeof j->title, "%s", line);
	} else {
		j->argv = calloc((size_t)argc + 1, sizeof *j->argv);
		size_t k = 0;
		for (int i = 0; j->argv && i < argc; i++) {
			j->argv[i] = strdup(argv[i]);
			j->argc++;
			k += (size_t)snprintf(j->title + k,
			                      k < sizeof j->title ? sizeof j->title - k : 0, "%s%s",
			                      i ? " " : "", argv[i]);
			if (k >= sizeof j->title)
				k = sizeof j->title;
		}
	}
	j->job = pb_job_new(body, j);
	if (!j->job || (line && !j->line) || (!line && !j->argv)) {
		job_free(j);
		tui_out(a, 1, "error: out of memory");
		return PB_ENOMEM;
	}
	tui_capture_begin(a, &j->cap);
	a->job = j;
	a->last_frame = tui_now();
	a->job_frames = 1;
	tui_recover_arm(a); /* its time counts in the first frame gap */
	if (pb_job_resume(j->job, JOB_SLICE)) {
		int rc = j->rc;
		*flags |= finish(a);
		return rc;
	}
	*flags |= PB_REDRAW_ALL;
	return PB_OK;
}

void tui_job_cancel(tui_app *a)
{
	if (!a->job)
		return;
	if (!a->job->cancelled) {
		tui_out(a, 1, "cancelling '%s' ...", a->job->title);
		a->job->cancel_wall = tui_now();
		a->job->cancel_cpu = cpu_now();
	}
	a->job->cancelled = 1;
	pb_job_cancel(a->job->job);
}

void tui_job_status(tui_app *a, char *buf, size_t len)
{
	static const char *const spin_u[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
	static const char *const spin_a[] = {"|", "/", "-", "\\"};
	tui_job *j = a->job;
	if (!j) {
		buf[0] = 0;
		return;
	}
	char t[32];
	a->spin++;
	const char *sp = a->utf8 ? spin_u[a->spin / 3 % 10] : spin_a[a->spin / 3 % 4];
	snprintf(buf, len, " %s %s  %s | %s | %s", sp, j->title,
	         pb_fmt_time(pb_job_elapsed(j->job), t, sizeof t),
	         j->cancelled ? "cancelling..." : "Esc/Ctrl-C cancel, hjkl pan, ? help",
	         a->progress[0] ? a->progress : "");
}

void tui_job_abandon(tui_app *a)
{
	if (!a->job)
		return;
	/* its coroutine cannot be unwound: the process is leaving, so its
	 * memory goes with it; the command context gets its streams back */
	a->ctx->out = a->job->cap.saved_out;
	a->ctx->log = a->job->cap.saved_log;
	a->ctx->redraw = a->job->cap.saved_redraw;
	a->job = NULL;
	tui_recover_disarm();
}
