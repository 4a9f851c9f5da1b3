/*
 * recover.c — the start-up offer of a recovery session (recover.h; the
 * session is written by signals.c).
 *
 * The question is an ask mode: the loop lays the graph out, draws it and
 * keeps the screen working while it waits for the answer.
 */
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mode_ask.h"
#include "output.h"
#include "recover.h"
#include "run.h"
#include "signals.h"
#include "util/file_door.h"

/* 1 when the session file at path names the model at model (same file). */
static int same_model(const char *path, const char *model)
{
	json_t *j = pb_door_load_json(path, 0, PB_DOOR_JSON, "session", NULL, NULL);
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

/* What the answer acts on. */
typedef struct offer {
	char path[PATH_MAX + 16]; /* the recovery file */
	char base[PATH_MAX];      /* the session file it stands for */
} offer;

static int on_answer(tui_app *a, int k, void *ud)
{
	offer *o = ud;
	int flags = 0, rc = PB_OK;
	if (k == 'r' || k == 'R') {
		char *argv[] = {"load", o->path};
		flags = tui_run_argv(a, 2, argv, &rc);
		if (rc == PB_OK) {
			free(a->s->session_path);
			a->s->session_path = strdup(o->base);
			a->s->dirty = 1; /* restored work is not saved yet */
			unlink(o->path);
			tui_out(a, 0, "restored the recovery session (unsaved: :w saves it to %s)",
			        o->base);
		}
	} else if (k == 'd' || k == 'D') {
		unlink(o->path);
		tui_out(a, 0, "deleted %s", o->path);
	}
	return flags;
}

void tui_recover_offer(tui_app *a, const char *session_arg)
{
	if (!a->s->graph || !a->s->model_path)
		return;
	offer *o = calloc(1, sizeof *o);
	if (!o)
		return;
	tui_recovery_path(session_arg, o->path, sizeof o->path);
	struct stat st;
	if (stat(o->path, &st) != 0 && session_arg) {
		tui_recovery_path(NULL, o->path, sizeof o->path);
		session_arg = NULL;
	}
	if (stat(o->path, &st) != 0 || !same_model(o->path, a->s->model_path)) {
		free(o);
		return;
	}
	snprintf(o->base, sizeof o->base, "%s", session_arg ? session_arg : TUI_DEFAULT_SESSION);
	char when[32], q[PATH_MAX + 200];
	strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&st.st_mtime));
	snprintf(q, sizeof q,
	         "recovery session %s (written %s when partbench was killed): r restore, d "
	         "delete it, Esc leave it",
	         o->path, when);
	tui_ask_open(a, q, "rRdD", on_answer, o);
}
