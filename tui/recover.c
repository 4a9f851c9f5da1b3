/*
 * recover.c — a recovery session when the workbench is killed.
 *
 * SIGTERM and SIGHUP only raise a flag (the handler does nothing else); the
 * main loop sees it between two slices of any running job, when the session
 * is consistent, writes the session atomically to RECOVERY = the last saved
 * or loaded session file + ".recover" (partbench-session.json.recover in the
 * working directory when there is none) and leaves. The next start whose
 * model is the recovery's offers to restore it (r), delete it (d) or leave it
 * (Esc); a restored session counts as unsaved and remembers the file the
 * recovery stands for.
 */
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app.h"

#define DEFAULT_SESSION "partbench-session.json"

static volatile sig_atomic_t pending;

static void on_signal(int sig)
{
	pending = sig;
}

void tui_signals_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int tui_signal_pending(void)
{
	if (!pending) {
		/* a terminal that went away without a SIGHUP reaching us (its
		 * reads return EOF at once: every input loop would spin) */
		struct pollfd p = {0, POLLIN, 0};
		if (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR | POLLNVAL)))
			pending = SIGHUP;
	}
	return pending;
}

static void recovery_path(const char *session, char *buf, size_t len)
{
	snprintf(buf, len, "%s.recover", session ? session : DEFAULT_SESSION);
}

int tui_recover_write(tui_app *a, char *path, size_t len)
{
	recovery_path(a->s->session_path, path, len);
	if (!a->s->graph || !a->s->dirty)
		return 1; /* nothing to recover */
	char *session = a->s->session_path ? strdup(a->s->session_path) : NULL;
	pb_error err = {0};
	int rc = pb_session_save(a->s, path, &err);
	/* saving a copy does not make the session saved */
	free(a->s->session_path);
	a->s->session_path = session;
	a->s->dirty = 1;
	return rc == PB_OK ? 0 : -1;
}

/* 1 when the session file at path names the model at model (same file). */
static int same_model(const char *path, const char *model)
{
	json_t *j = json_load_file(path, 0, NULL);
	const char *m = j ? json_string_value(json_object_get(j, "model")) : NULL;
	int same = 0;
	if (m) {
		char *ra = realpath(m, NULL), *rb = realpath(model, NULL);
		same = ra && rb && strcmp(ra, rb) == 0;
		free(ra);
		free(rb);
	}
	json_decref(j);
	return same;
}

void tui_recover_offer(tui_app *a, const char *session_arg)
{
	if (!a->s->graph || !a->s->model_path)
		return;
	char path[PATH_MAX + 16];
	recovery_path(session_arg, path, sizeof path);
	struct stat st;
	if (stat(path, &st) != 0 && session_arg) {
		recovery_path(NULL, path, sizeof path);
		session_arg = NULL;
	}
	if (stat(path, &st) != 0 || !same_model(path, a->s->model_path))
		return;
	char when[32], q[PATH_MAX + 200];
	strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&st.st_mtime));
	snprintf(q, sizeof q,
	         "recovery session %s (written %s when partbench was killed): r restore, d "
	         "delete it, Esc leave it",
	         path, when);
	int k = tui_ask(a, q, "rRdD");
	if (k == 'r' || k == 'R') {
		char *argv[] = {"load", path};
		if (tui_run_argv(a, 2, argv) == PB_OK) {
			char base[PATH_MAX];
			snprintf(base, sizeof base, "%s",
			         session_arg ? session_arg : DEFAULT_SESSION);
			free(a->s->session_path);
			a->s->session_path = strdup(base);
			a->s->dirty = 1; /* restored work is not saved yet */
			unlink(path);
			tui_out(a, 0, "restored the recovery session (unsaved: :w saves it to %s)",
			        base);
		}
	} else if (k == 'd' || k == 'D') {
		unlink(path);
		tui_out(a, 0, "deleted %s", path);
	}
}
