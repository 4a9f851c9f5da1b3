/*
 * quit.c — leaving the workbench without losing work, and Ctrl-Z.
 *
 * With unsaved changes (pb_session dirty) quitting asks: s saves the session
 * (to the file it was last saved to or loaded from, else
 * partbench-session.json) and quits, d discards them and quits, c or Esc
 * stays. Ctrl-C with nothing running asks "quit?" first. The questions are
 * ask modes (mode_ask.h).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "mode_ask.h"
#include "output.h"
#include "quit.h"
#include "run.h"
#include "signals.h"

static int on_confirm(tui_app *a, int k, void *ud)
{
	(void)a, (void)ud;
	return k % 32 == 'y' % 32 && k ? PB_QUIT : 0;
}

static int on_unsaved(tui_app *a, int k, void *ud)
{
	(void)ud;
	pb_session *s = a->s;
	if (k == 's' || k == 'S') {
		const char *path = s->session_path ? s->session_path : TUI_DEFAULT_SESSION;
		char *argv[] = {"save", (char *)path};
		int rc, flags = tui_run_argv(a, 2, argv, &rc);
		return flags | (rc == PB_OK && !s->dirty ? PB_QUIT : 0);
	}
	if (k == 'd' || k == 'D')
		return PB_QUIT;
	tui_out(a, 0, "quit cancelled");
	return 0;
}

int tui_quit_ask(tui_app *a, int confirm)
{
	pb_session *s = a->s;
	if (!s->dirty) {
		if (!confirm)
			return PB_QUIT;
		tui_ask_open(a, "quit partbench? (y/n)", "yYnN", on_confirm, NULL);
		return 0;
	}
	const char *path = s->session_path ? s->session_path : TUI_DEFAULT_SESSION;
	char q[512];
	snprintf(q, sizeof q,
	         "unsaved changes: s save to %s and quit, d discard and quit, c cancel", path);
	tui_ask_open(a, q, "sSdDcC", on_unsaved, NULL);
	return 0;
}

int tui_suspend(tui_app *a)
{
	(void)a;
	def_prog_mode();
	endwin();
	raise(SIGSTOP);
	/* resumed (fg) */
	reset_prog_mode();
	clearok(curscr, TRUE);
	return PB_REDRAW_ALL;
}
