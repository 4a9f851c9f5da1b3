/*
 * app.c — the workbench: start-up, the one event loop, shut-down.
 *
 * Loop invariant: each turn (1) lets the modes on the stack work between
 * events (the job mode runs its job's next slice), collects library output
 * written to fd 2 and a finished dot layout; (2) rebuilds the view graph and
 * moves the camera when the flags say the view changed, and computes what
 * views show but must not compute while drawing (the branch groups, a
 * shard plan operator's candidate specs); (3)
 * draws the views whose flags are set, then the top mode's line or screen,
 * and flushes once (wnoutrefresh per window, one doupdate); (4) waits for
 * one input event (polling only while a job or dot runs) and gives it to the
 * top mode (a key the mode passes goes down the stack). Every handler
 * returns PB_REDRAW_* | TUI_* flags, which the loop collects in a->redraw;
 * nothing below the loop calls back into it.
 *
 * GLPK's terminal output is switched off; other library messages are caught
 * by libout.c.
 */
#include <glpk.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "branch_color.h"
#include "spec_cands.h"
#include "fit.h"
#include "jobs.h"
#include "libout.h"
#include "mode_normal.h"
#include "output.h"
#include "recover.h"
#include "signals.h"
#include "tui.h"
#include "view.h"
#include "viewgraph.h"
#include "views.h"
#include "util/file_door.h"

/* Remembers the current plan for on_session's message when a new model
 * replaces it (the session has freed it by then). */
static void note_plan(tui_app *a)
{
	const pb_session *s = a->s;
	a->plan_note_dirty = s->dirty;
	if (!s->plan || !s->graph) {
		a->plan_note[0] = '\0';
		return;
	}
	const char *m = s->graph->path ? s->graph->path : "";
	const char *base = strrchr(m, '/');
	snprintf(a->plan_note, sizeof a->plan_note, "%s/%s (%d group%s) of %.80s", s->plan->kind,
	         s->plan->method, s->plan->n_groups, s->plan->n_groups == 1 ? "" : "s",
	         base ? base + 1 : m);
}

static void on_session(void *ud, int what)
{
	tui_app *a = ud;
	/* nothing removed without a message: the plan of the model an open or
	 * load replaced */
	if (what & PB_EVENT_GRAPH && a->plan_note[0] && !a->s->plan) {
		tui_out(a, 0, "closed the plan %s with its model%s", a->plan_note,
		        a->plan_note_dirty ? " (it was not saved)" : "");
		a->plan_note[0] = '\0';
	}
	/* a hand edit or another method took the plan from the stepping
	 * solver: said after the command's output (capture.c) */
	if (what & PB_EVENT_SOLVER_DETACH)
		a->detach_note = 1;
	if (what & (PB_EVENT_PLAN | PB_EVENT_GRAPH))
		a->plan_gen++;
	if (what & (PB_EVENT_PLAN | PB_EVENT_GRAPH | PB_EVENT_SOLVER_STEP | PB_EVENT_SOLVER_DETACH))
		a->redraw |= PB_REDRAW_ALL;
	if (what & PB_EVENT_GRAPH)
		a->redraw |= PB_RELAYOUT;
}

static void mouse_apply(tui_app *a)
{
	int on = (int)a->s->view.mouse;
	if (on == a->mouse_on)
		return;
	a->mouse_on = on;
	mousemask(on ? (BUTTON1_PRESSED | BUTTON1_RELEASED | BUTTON1_CLICKED | BUTTON4_PRESSED
#ifdef BUTTON5_PRESSED
	                | BUTTON5_PRESSED
#endif
	                )
	             : 0,
	          NULL);
}

/* ---- start-up ---- */

static const pb_opt tui_opts[] = {
    PB_OPTS_LAYOUT,
    PB_OPTS_GRAPH,
    {.name = "no-mouse", .type = PB_OPT_FLAG, .help = "do not capture the mouse"},
    {.name = "session",
     .short_name = 's',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "open a saved session"},
    PB_OPTS_END,
};

static void colors_init(tui_app *a)
{
	const char *nc = getenv("NO_COLOR");
	a->color = has_colors() && !(nc && nc[0]);
	if (!a->color)
		return;
	start_color();
	use_default_colors();
	short pal[6] = {COLOR_CYAN, COLOR_GREEN,   COLOR_YELLOW,
	                COLOR_BLUE, COLOR_MAGENTA, COLOR_WHITE};
	for (int i = 0; i < 6; i++)
		init_pair((short)(1 + i), pal[i], -1);
	init_pair(7, COLOR_RED, -1);
	init_pair(8, COLORS > 8 ? 8 : COLOR_WHITE, -1);
}

static int preload(tui_app *a, const pb_args *args, pb_error *err)
{
	pb_cmd_ctx *ctx = a->ctx;
	char *obuf = NULL;
	size_t olen = 0;
	FILE *out = open_memstream(&obuf, &olen);
	FILE *saved = ctx->out;
	if (out)
		ctx->out = out;
	int rc = PB_OK;
	const char *session = pb_args_str(args, "session", NULL);
	if (session) {
		char *argv[] = {"load", (char *)session};
		rc = pb_cmd_run_argv(ctx, 2, argv, err);
	}
	if (!rc && pb_args_pos(args, 0)) {
		char *argv[2 + 2 * PB_ARGS_MAX_LIST];
		int n = 0;
		argv[n++] = "open";
		argv[n++] = (char *)pb_args_pos(args, 0);
		const char **specs;
		int k = pb_args_list(args, "input", &specs);
		for (int i = 0; i < k; i++) {
			argv[n++] = "--input";
			argv[n++] = (char *)specs[i];
		}
		rc = pb_cmd_run_argv(ctx, n, argv, err);
	}
	const char *layout = pb_args_str(args, "layout", NULL);
	if (!rc && layout) {
		char *argv[] = {"layout", (char *)layout};
		rc = pb_cmd_run_argv(ctx, 2, argv, err);
	}
	if (!rc && pb_args_has(args, "no-mouse")) {
		char *argv[] = {"view", "mouse", "off"};
		rc = pb_cmd_run_argv(ctx, 3, argv, err);
	}
	ctx->out = saved;
	if (out)
		fclose(out);
	if (obuf && obuf[0])
		tui_out_add(a, 0, obuf);
	free(obuf);
	return rc;
}

static void app_free(tui_app *a)
{
	tui_mode_clear(a);
	tui_vg_free(&a->vg);
	tui_branch_free(a);
	tui_cands_free(a);
	tui_views_free(a);
	tui_out_free(a);
	if (a->timing)
		fclose(a->timing);
}

/* The timing log's lines for a frame flushed now (PB_TUI_TIMING). */
static void frame_timing(tui_app *a)
{
	double now = tui_now();
	/* every frame while a job runs, and the first after it (a job that ends
	 * within its first slice logs the whole time the screen waited) */
	if (a->job_frames && a->last_frame > 0)
		tui_timing_log(a, "job_frame_ms %.2f\n", (now - a->last_frame) * 1e3);
	a->job_frames = a->job != NULL;
	a->last_frame = now;
	if (!a->logged_first && a->s->graph && a->vg.layout) {
		a->logged_first = 1;
		tui_timing_log(a, "first_frame_ms %.1f layout %s\n", (now - a->t_start) * 1e3,
		               a->vg.layout->from_dot ? "dot" : "simple");
	}
	if (!a->logged_dot && a->vg.layout && a->vg.layout->from_dot) {
		a->logged_dot = 1;
		tui_timing_log(a, "dot_frame_ms %.1f boxes %d\n", (now - a->t_start) * 1e3,
		               a->vg.n_items);
	}
	if (a->t_key > 0) {
		tui_timing_log(a, "key_frame_ms %.3f key %d\n", (now - a->t_key) * 1e3,
		               a->key_for_timing);
		a->t_key = 0;
	}
}

/* The top mode that draws, and whether it covers the views. */
static tui_mode_entry *drawing_mode(tui_app *a)
{
	for (int i = a->n_modes - 1; i >= 0; i--)
		if (a->modes[i].mode->draw)
			return &a->modes[i];
	return NULL;
}

/* Draws what the flags ask for and flushes once. */
static void frame(tui_app *a)
{
	tui_mode_entry *m = drawing_mode(a);
	int flags = a->redraw & ~PB_QUIT;
	a->redraw &= PB_QUIT;
	if (!flags && !(m && (m->mode->full_screen || m->mode->cursor)) && !a->job)
		return;
	if (!(m && m->mode->full_screen) || a->too_small)
		tui_views_draw(a, a->too_small ? PB_REDRAW_ALL : flags);
	if (m && !a->too_small)
		m->mode->draw(a, m->data);
	if (m && m->mode->full_screen && a->wcmd)
		untouchwin(a->wcmd); /* reading keys from it must not paint it over the mode */
	curs_set(m && m->mode->cursor && !a->too_small ? 1 : 0);
	doupdate();
	frame_timing(a);
}

/* The view graph and the camera follow the flags; the branch groups are
 * computed here, not while drawing. */
static void update(tui_app *a)
{
	if (a->redraw & (PB_RELAYOUT | PB_REDRAW_CANVAS | TUI_FIT))
		a->redraw |= tui_vg_update(a);
	if (a->redraw & (TUI_FIT | TUI_RECENTRE)) {
		int recentre = (a->redraw & TUI_RECENTRE) != 0;
		a->redraw &= ~(TUI_FIT | TUI_RECENTRE);
		a->redraw |= tui_fit(a, recentre) & ~(TUI_FIT | TUI_RECENTRE);
		if (a->redraw & PB_RELAYOUT)
			a->redraw |= tui_vg_update(a);
	}
	a->redraw &= ~PB_RELAYOUT;
	a->redraw |= tui_branch_refresh(a);
	a->redraw |= tui_cands_refresh(a);
}

/* Work between events: every mode's idle handler. Returns 1 when one of
 * them wants the loop to poll. */
static int idle(tui_app *a)
{
	int busy = 0;
	for (int i = a->n_modes - 1; i >= 0; i--) {
		const tui_mode *m = a->modes[i].mode;
		if (m->idle) {
			a->redraw |= m->idle(a, a->modes[i].data);
			busy = 1;
		}
	}
	return busy;
}

/* Gives a key to the top mode; a key it passes goes down the stack. */
static int dispatch_key(tui_app *a, int ch, int code)
{
	for (int i = a->n_modes - 1; i >= 0; i--) {
		const tui_mode *m = a->modes[i].mode;
		if (!m->key)
			continue;
		int f = m->key(a, a->modes[i].data, ch, code);
		if (!(f & TUI_PASS))
			return f;
	}
	return 0;
}

static int dispatch_mouse(tui_app *a)
{
	MEVENT ev;
	if (getmouse(&ev) != OK)
		return 0;
	for (int i = a->n_modes - 1; i >= 0; i--)
		if (a->modes[i].mode->mouse)
			return a->modes[i].mode->mouse(a, a->modes[i].data, &ev);
	return 0;
}

static int resize(tui_app *a)
{
	int flags = TUI_RECENTRE | PB_REDRAW_ALL;
	tui_views_layout(a);
	for (int i = 0; i < a->n_modes; i++)
		if (a->modes[i].mode->resize)
			flags |= a->modes[i].mode->resize(a, a->modes[i].data);
	return flags;
}

/* Runs the loop until quit or a signal; returns the signal (0 on quit). */
static int loop(tui_app *a)
{
	while (!a->quit) {
		note_plan(a);
		if (tui_signal_pending())
			return tui_signal_pending();
		int busy = idle(a);
		tui_libout_poll(a);
		a->redraw |= tui_vg_poll(a);
		update(a);
		if (a->redraw & PB_QUIT)
			break;
		frame(a);
		WINDOW *in = a->wcmd ? a->wcmd : stdscr;
		keypad(in, TRUE);
		wtimeout(in, busy || a->job ? 0 : a->vg.job ? 30 : 1000);
		wint_t wch;
		int r = wget_wch(in, &wch);
		if (r == ERR)
			continue; /* the loop's top reads signals and hang-ups */
		int ch = (int)wch, code = r == KEY_CODE_YES;
		a->t_key = tui_now();
		a->key_for_timing = ch;
		int flags;
		if (code && ch == KEY_RESIZE)
			flags = resize(a);
		else if (a->too_small)
			flags = !code && ch == 'q' ? PB_QUIT : 0;
		else if (code && ch == KEY_MOUSE)
			flags = dispatch_mouse(a);
		else
			flags = dispatch_key(a, ch, code);
		a->redraw |= flags & ~TUI_PASS;
		if (a->redraw & PB_QUIT)
			a->quit = 1;
		mouse_apply(a);
	}
	return 0;
}

int pb_tui_main(pb_cmd_ctx *ctx, int argc, char **argv, pb_error *err)
{
	tui_app app, *a = &app;
	memset(a, 0, sizeof app);
	int killed = 0, saved = 0;
	char rpath[PATH_MAX + 16] = "";
	a->t_start = tui_now();
	a->ctx = ctx;
	a->s = ctx->s;
	a->drag_node = -1;
	a->last_sel = -1;
	a->mouse_on = -1;
	pb_args args;
	int rc = pb_args_parse(tui_opts, argc, argv, &args, "partbench", err);
	if (rc)
		return rc;
	if (args.help || args.n_pos > 1) {
		fprintf(args.help ? stdout : stderr,
		        "Usage: partbench [MODEL] [--layout FILE] [--input NAME=DIMS] "
		        "[--session FILE] [--no-mouse]\n"
		        "Opens the workbench (needs a terminal). 'partbench help' lists the batch "
		        "commands.\n\n");
		pb_args_print_options(tui_opts, args.help ? stdout : stderr);
		return args.help ? PB_OK : PB_EUSAGE;
	}
	if (!isatty(0) || !isatty(1))
		return pb_err(err, PB_EUSAGE,
		              "the workbench needs a terminal (stdin and stdout must be a tty); "
		              "for batch use run 'partbench COMMAND ...' (see 'partbench help')");
	rc = preload(a, &args, err);
	if (rc) {
		app_free(a);
		return rc;
	}
	a->s->dirty = 0; /* what the command line opened is not a change */
	const char *tpath = getenv("PB_TUI_TIMING");
	if (tpath && tpath[0])
		a->timing = pb_door_fopen_write(tpath, 1, "timing log", NULL);
	setlocale(LC_ALL, "");
	a->utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	glp_term_out(GLP_OFF);
	tui_libout_start(a);
	if (!initscr()) {
		tui_libout_stop(a);
		app_free(a);
		return pb_err(err, PB_EINTERNAL, "could not initialise the terminal");
	}
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	mouseinterval(0);
	colors_init(a);
	pb_session_listen(a->s, on_session, a);
	tui_mode_push(a, &tui_mode_normal, NULL);
	tui_views_layout(a);
	mouse_apply(a);
	tui_out(a, 0, "partbench workbench: ? help, : command, / search, q quit");
	tui_signals_install();
	if (a->s->graph && a->s->view.sel < 0)
		a->redraw |= tui_view_start(a);
	/* the offer is a question on the bottom row: the graph is laid out
	 * and drawn meanwhile */
	tui_recover_offer(a, pb_args_str(&args, "session", NULL));
	a->redraw |= PB_REDRAW_ALL | TUI_FIT;
	killed = loop(a);
	if (killed)
		saved = tui_recover_write(a, rpath, sizeof rpath);
	tui_job_abandon(a);
	pb_session_unlisten(a->s, on_session, a);
	if (a->timing)
		tui_timing_log(a, "session_s %.3f\n", tui_now() - a->t_start);
	endwin();
	tui_libout_stop(a);
	app_free(a);
	if (killed) {
		/* say what was kept, then die of the signal as a process killed
		 * by it does (exit status 128 + signal: shells and supervisors
		 * tell a kill from a failure) */
		fprintf(stderr, "partbench: %s: %s%s\n", killed == SIGTERM ? "SIGTERM" : "SIGHUP",
		        saved == 0   ? "the session was written to "
		        : saved == 1 ? "nothing unsaved, no recovery session"
		                     : "could not write the recovery session ",
		        saved == 1 ? "" : rpath);
		fflush(NULL);
		signal(killed, SIG_DFL);
		raise(killed);
		return pb_err(err, PB_EINTERNAL, "killed by signal %d", killed);
	}
	return PB_OK;
}
