/*
 * quit.c — leaving the workbench without losing work, and Ctrl-Z.
 *
 * With unsaved changes (pb_session dirty) quitting asks: s saves the session
 * (to the file it was last saved to or loaded from, else
 * partbench-session.json) and quits, d discards them and quits, c or Esc
 * stays. Ctrl-C with nothing running asks "quit?" first.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

void tui_ask_quit(tui_app *a, int confirm)
{
	pb_session *s = a->s;
	if (!s->dirty) {
		if (!confirm || tui_ask(a, "quit partbench? (y/n)", "yYnN") % 32 == 'y' % 32)
			a->quit = 1;
		return;
	}
	const char *path = s->session_path ? s->session_path : "partbench-session.json";
	char q[512];
	snprintf(q, sizeof q,
	         "unsaved changes: s save to %s and quit, d discard and quit, c cancel", path);
	int k = tui_ask(a, q, "sSdDcC");
	if (k == 's' || k == 'S') {
		char *argv[] = {"save", (char *)path};
		if (tui_run_argv(a, 2, argv) == PB_OK && !s->dirty)
			a->quit = 1;
	} else if (k == 'd' || k == 'D') {
		a->quit = 1;
	} else {
		tui_out(a, 0, "quit cancelled");
	}
}

void tui_suspend(tui_app *a)
{
	def_prog_mode();
	endwin();
	raise(SIGSTOP);
	/* resumed (fg) */
	reset_prog_mode();
	clearok(curscr, TRUE);
	a->redraw |= PB_REDRAW_ALL;
}
