/*
 * app.c — the workbench: start-up, windows, the main loop, running commands.
 *
 * Loop invariant: each iteration (1) collects library output written to fd 2
 * and a finished dot layout, (2) draws the windows whose PB_REDRAW_* flags are
 * set and flushes once (wnoutrefresh per window, one doupdate), (3) waits for
 * one input event (with a short timeout only while dot runs) and turns it
 * into a command string. Commands run through the command table with their
 * output captured in a memory stream and shown in the output pane; their
 * redraw flags and the session's plan-change events decide what is redrawn.
 *
 * Library messages (Graphviz, igraph, GLPK, Lua) never reach the screen:
 * fd 2 is redirected to an unlinked temporary file for the whole session and
 * new text in it is shown as "[lib]" lines in the output pane; GLPK's
 * terminal output is switched off.
 */
#include <errno.h>
#include <glpk.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "partition/chain_layers.h"
#include "tui.h"
#include "util/job.h"
#include "view.h"

#define MIN_ROWS 24
#define MIN_COLS 80

double tui_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void out_add(tui_app *a, int is_err, const char *text)
{
	const char *p = text;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		int idx = a->out_head;
		free(a->out[idx]);
		a->out[idx] = strndup(p, n);
		for (char *c = a->out[idx]; c && *c; c++)
			if (*c == '\t' || *c == '\r')
				*c = ' ';
		a->out_err[idx] = is_err;
		a->out_gen[idx] = a->plan_gen;
		a->out_head = (a->out_head + 1) % TUI_OUT_LINES;
		if (a->n_out < TUI_OUT_LINES)
			a->n_out++;
		a->out_total++;
		p += n;
		if (*p == '\n')
			p++;
	}
	a->redraw |= PB_REDRAW_STATUS;
}

void tui_out(tui_app *a, int is_err, const char *fmt, ...)
{
	char buf[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	out_add(a, is_err, buf);
}

int tui_selected(const tui_app *a)
{
	const pb_graph *g = a->s->graph;
	if (!g || g->n_nodes == 0)
		return -1;
	long sel = pb_view_get_int(a->s->view, "sel", 0);
	return (int)(sel < 0 ? 0 : sel >= g->n_nodes ? g->n_nodes - 1 : sel);
}

int tui_group_of(const tui_app *a, int node)
{
	const pb_plan *p = a->s->plan;
	if (!p || node < 0 || node >= p->n_nodes || !a->s->graph ||
	    p->n_nodes != a->s->graph->n_nodes)
		return -1;
	int g = p->group[node];
	return g >= 0 && g < p->n_groups ? g : -1;
}

/* ---- library output captured from fd 2 ---- */

static void capture_start(tui_app *a)
{
	a->saved_stderr = -1;
	a->errfile = tmpfile();
	if (!a->errfile)
		return;
	fflush(stderr);
	a->saved_stderr = dup(2);
	dup2(fileno(a->errfile), 2);
}

static void capture_poll(tui_app *a)
{
	struct stat st;
	if (!a->errfile || fstat(fileno(a->errfile), &st) != 0 || st.st_size <= a->err_off)
		return;
	size_t n = (size_t)(st.st_size - a->err_off);
	if (n > 8192)
		n = 8192;
	char *buf = malloc(n + 1);
	if (!buf)
		return;
	ssize_t r = pread(fileno(a->errfile), buf, n, a->err_off);
	if (r > 0) {
		buf[r] = 0;
		a->err_off += r;
		for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
			tui_out(a, 1, "[lib] %s", line);
	}
	free(buf);
}

static void capture_stop(tui_app *a)
{
	if (a->saved_stderr >= 0) {
		fflush(stderr);
		dup2(a->saved_stderr, 2);
		close(a->saved_stderr);
	}
	if (a->errfile)
		fclose(a->errfile);
	a->errfile = NULL;
}

/* ---- windows ---- */

static void windows_free(tui_app *a)
{
	WINDOW **ws[] = {&a->wtitle, &a->wcanvas, &a->wside, &a->wout, &a->wstatus, &a->wcmd};
	for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++)
		if (*ws[i]) {
			delwin(*ws[i]);
			*ws[i] = NULL;
		}
}

static void windows_make(tui_app *a)
{
	windows_free(a);
	getmaxyx(stdscr, a->rows, a->cols);
	a->too_small = a->rows < MIN_ROWS || a->cols < MIN_COLS;
	if (a->too_small)
		return;
	a->side_w = a->cols >= 120 ? 52 : 36;
	a->out_h = a->rows >= 40 ? 7 : 4;
	a->canvas_h = a->rows - 1 - a->out_h - 2;
	a->canvas_w = a->cols - a->side_w - 1;
	a->wtitle = newwin(1, a->cols, 0, 0);
	a->wcanvas = newwin(a->canvas_h, a->canvas_w, 1, 0);
	a->wside = newwin(a->canvas_h, a->side_w, 1, a->cols - a->side_w);
	a->wout = newwin(a->out_h, a->cols, 1 + a->canvas_h, 0);
	a->wstatus = newwin(1, a->cols, a->rows - 2, 0);
	a->wcmd = newwin(1, a->cols, a->rows - 1, 0);
	keypad(a->wcmd, TRUE);
	a->redraw |= PB_REDRAW_ALL;
}

void tui_hrule(const tui_app *a, WINDOW *w, int y, int x, int n)
{
	int W = getmaxx(w);
	for (int i = 0; i < n && x + i < W; i++)
		mvwaddstr(w, y, x + i, a->utf8 ? "─" : "-");
}

void tui_vrule(const tui_app *a, WINDOW *w, int y, int x, int n)
{
	int H = getmaxy(w);
	for (int i = 0; i < n && y + i < H; i++)
		mvwaddstr(w, y + i, x, a->utf8 ? "│" : "|");
}

void tui_timing_log(tui_app *a, const char *fmt, ...)
{
	if (!a->timing)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(a->timing, fmt, ap);
	va_end(ap);
	fflush(a->timing);
}

void tui_draw(tui_app *a)
{
	if (a->too_small) {
		erase();
		mvprintw(a->rows / 2, 0, "partbench needs at least %dx%d; this terminal is %dx%d.",
		         MIN_COLS, MIN_ROWS, a->cols, a->rows);
		mvprintw(a->rows / 2 + 1, 0, "Enlarge it, or press q to quit.");
		wnoutrefresh(stdscr);
		doupdate();
		a->redraw = 0;
		return;
	}
	int r = a->redraw;
	if (!r)
		return;
	if (r & PB_REDRAW_CANVAS) {
		/* the divider between canvas and side pane */
		tui_vrule(a, stdscr, 1, a->canvas_w, a->canvas_h);
		wnoutrefresh(stdscr);
		tui_canvas_draw(a);
		wnoutrefresh(a->wcanvas);
	}
	if (r & (PB_REDRAW_TABLE | PB_REDRAW_CANVAS | PB_REDRAW_STATUS)) {
		tui_side_draw(a);
		wnoutrefresh(a->wside);
	}
	tui_title_draw(a);
	wnoutrefresh(a->wtitle);
	tui_out_draw(a);
	wnoutrefresh(a->wout);
	tui_status_draw(a);
	wnoutrefresh(a->wstatus);
	werase(a->wcmd);
	wnoutrefresh(a->wcmd);
	doupdate();
	a->redraw = 0;
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

/* ---- running commands ---- */

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
	if (what & (PB_EVENT_PLAN | PB_EVENT_GRAPH))
		a->plan_gen++;
	if (what & (PB_EVENT_PLAN | PB_EVENT_GRAPH | PB_EVENT_SOLVER_STEP))
		a->redraw |= PB_REDRAW_ALL;
	if (what & PB_EVENT_GRAPH)
		a->redraw |= PB_RELAYOUT;
}

static int on_progress(void *ud, double fraction, const char *text)
{
	tui_app *a = ud;
	a->progress_calls++;
	if (fraction < 0)
		snprintf(a->progress, sizeof a->progress, "%s", text);
	else
		snprintf(a->progress, sizeof a->progress, "[%3.0f%%] %s", fraction * 100, text);
	/* the main loop draws and reads keys between the job's slices */
	return pb_job_cancelled();
}

void tui_capture_begin(tui_app *a, tui_capture *c)
{
	pb_cmd_ctx *ctx = a->ctx;
	memset(c, 0, sizeof *c);
	c->out = open_memstream(&c->obuf, &c->olen);
	c->log = open_memstream(&c->lbuf, &c->llen);
	c->saved_out = ctx->out;
	c->saved_log = ctx->log;
	c->saved_redraw = ctx->redraw;
	if (c->out)
		ctx->out = c->out;
	if (c->log)
		ctx->log = c->log;
	ctx->redraw = 0;
	ctx->interactive = 1;
	ctx->progress = on_progress;
	ctx->progress_ud = a;
}

int tui_capture_end(tui_app *a, tui_capture *c, int rc, const pb_error *err)
{
	pb_cmd_ctx *ctx = a->ctx;
	ctx->out = c->saved_out;
	ctx->log = c->saved_log;
	int flags = ctx->redraw;
	ctx->redraw = c->saved_redraw;
	if (c->out)
		fclose(c->out);
	if (c->log)
		fclose(c->log);
	if (c->lbuf && c->lbuf[0])
		out_add(a, 0, c->lbuf);
	if (c->obuf && c->obuf[0])
		out_add(a, 0, c->obuf);
	free(c->obuf);
	free(c->lbuf);
	if (rc)
		tui_out(a, 1, "error: %s", err->msg[0] ? err->msg : "command failed");
	if (flags & PB_QUIT)
		a->quit = 1;
	a->redraw |= (flags & PB_REDRAW_ALL) | PB_REDRAW_STATUS;
	if (a->run_depth == 0) {
		tui_vg_update(a);
		tui_canvas_fit(a);
	}
	return rc;
}

/* ':q' and ':quit' (no arguments) ask about unsaved changes first. */
static int is_plain_quit(int argc, char **argv, const char *line)
{
	char word[16] = "", extra[8] = "";
	if (line) {
		if (sscanf(line, "%15s %7s", word, extra) != 1)
			return 0;
	} else if (argc == 1) {
		snprintf(word, sizeof word, "%s", argv[0]);
	}
	return strcmp(word, "q") == 0 || strcmp(word, "quit") == 0;
}

static int run_common(tui_app *a, int argc, char **argv, const char *line)
{
	const char *first = line ? line : argc > 0 ? argv[0] : "";
	if (a->run_depth == 0 && !a->job && is_plain_quit(argc, argv, line)) {
		tui_ask_quit(a, 0);
		return PB_OK;
	}
	int nav = tui_cmd_is_navigation(first);
	if (a->job && !nav) {
		tui_out(a, 1,
		        "busy: a job is running (Esc or Ctrl-C cancels it; navigation, "
		        "?, / and o keep working)");
		return PB_EUSAGE;
	}
	if (!nav && a->run_depth == 0)
		return tui_job_start(a, argc, argv, line);
	tui_capture c;
	tui_capture_begin(a, &c);
	pb_error err = {0};
	a->run_depth++;
	int rc =
	    line ? pb_cmd_run_line(a->ctx, line, &err) : pb_cmd_run_argv(a->ctx, argc, argv, &err);
	a->run_depth--;
	if (!a->job)
		a->progress[0] = 0;
	return tui_capture_end(a, &c, rc, &err);
}

int tui_run(tui_app *a, const char *line)
{
	return run_common(a, 0, NULL, line);
}

int tui_run_argv(tui_app *a, int argc, char **argv)
{
	return run_common(a, argc, argv, NULL);
}

/* ---- pager ---- */

void tui_pager(tui_app *a, const char *title, const char *text)
{
	int n = 0, cap = 64;
	const char **lines = malloc(sizeof *lines * (size_t)cap);
	int *lens = malloc(sizeof *lens * (size_t)cap);
	for (const char *p = text; lines && lens && *p;) {
		const char *e = strchr(p, '\n');
		int len = e ? (int)(e - p) : (int)strlen(p);
		if (n == cap) {
			cap *= 2;
			const char **nl = realloc(lines, sizeof *lines * (size_t)cap);
			int *nn = realloc(lens, sizeof *lens * (size_t)cap);
			if (nl)
				lines = nl;
			if (nn)
				lens = nn;
			if (!nl || !nn)
				break;
		}
		if (!lines || !lens)
			break;
		lines[n] = p;
		lens[n++] = len;
		p += len + (e ? 1 : 0);
	}
	int top = 0;
	WINDOW *w = newwin(0, 0, 0, 0);
	keypad(w, TRUE);
	for (;;) {
		int H, W;
		getmaxyx(w, H, W);
		werase(w);
		wattron(w, A_REVERSE);
		mvwhline(w, 0, 0, ' ', W);
		char busy[400] = "";
		if (a->job) /* the job keeps running under the pager: say so */
			tui_job_status(a, busy, sizeof busy);
		mvwprintw(w, 0, 1, "%s  lines %d-%d of %d  (j/k/Space/b scroll, q closes)%s", title,
		          n ? top + 1 : 0, top + H - 1 < n ? top + H - 1 : n, n, busy);
		wattroff(w, A_REVERSE);
		for (int r = 1; r < H && top + r - 1 < n; r++)
			mvwaddnstr(w, r, 0, lines[top + r - 1],
			           lens[top + r - 1] < W ? lens[top + r - 1] : W);
		wnoutrefresh(w);
		doupdate();
		tui_job_frame(a);
		if (a->job) /* the job keeps running under the pager */
			tui_job_pump(a);
		wtimeout(w, a->job ? 10 : -1);
		int ch = wgetch(w);
		if (tui_signal_pending())
			break;
		if (ch == ERR)
			continue;
		int page = H - 2 > 1 ? H - 2 : 1;
		if (ch == 'j' || ch == KEY_DOWN || ch == '\n')
			top++;
		else if (ch == 'k' || ch == KEY_UP)
			top--;
		else if (ch == ' ' || ch == KEY_NPAGE)
			top += page;
		else if (ch == 'b' || ch == KEY_PPAGE)
			top -= page;
		else if (ch == 'g' || ch == KEY_HOME)
			top = 0;
		else if (ch == 'G' || ch == KEY_END)
			top = n - page;
		else if (ch == KEY_RESIZE)
			windows_make(a);
		else if (ch != ERR && ch != KEY_MOUSE)
			break;
		if (top > n - page)
			top = n - page;
		if (top < 0)
			top = 0;
	}
	delwin(w);
	free(lines);
	free(lens);
	touchwin(stdscr);
	wnoutrefresh(stdscr);
	a->redraw |= PB_REDRAW_ALL;
}

/* ---- mouse ---- */

static void group_range(const tui_app *a, int g, int *first, int *last)
{
	const pb_plan *p = a->s->plan;
	*first = p->groups[g].first_node;
	*last = p->groups[g].last_node;
	if (*first >= 0 && *last >= *first)
		return;
	*first = *last = -1;
	for (int i = 0; i < p->n_nodes; i++)
		if (p->group[i] == g) {
			if (*first < 0)
				*first = i;
			*last = i;
		}
}

/* Writes node v's name as one double-quoted command argument. */
static void quoted_name(const tui_app *a, int v, char *buf, size_t n)
{
	const char *s = a->s->graph->nodes[v].name;
	size_t k = 0;
	if (n < 3)
		return;
	buf[k++] = '"';
	for (; *s && k + 3 < n; s++) {
		if (*s == '"' || *s == '\\')
			buf[k++] = '\\';
		buf[k++] = *s;
	}
	buf[k++] = '"';
	buf[k] = 0;
}

/* A drop of item `from` onto item `to` (-1: empty canvas) as the edit of
 * the current plan's kind (issue 18.1): on a map plan the node moves to the
 * backend of the target's group (`backend`); on a fuse plan it joins the
 * target's fusion group (`fuse-in`) or, dropped on empty canvas, leaves its
 * own (`fuse-out`). Returns 0 for the other kinds (partition and pipeline
 * plans move a boundary, below); line = "" when there is nothing to do. The
 * command refuses an invalid edit and says why in the output pane. */
static int drop_edit(tui_app *a, int from, int to, char *line, size_t n)
{
	const pb_plan *p = a->s->plan;
	const tui_item *src = &a->vg.items[from];
	char name[300], with[300];
	line[0] = 0;
	quoted_name(a, src->first, name, sizeof name);
	if (strcmp(p->kind, "map") == 0) {
		int H = to >= 0 ? a->vg.items[to].group : -1;
		if (H < 0 || H == src->group || H >= p->n_groups || !p->groups[H].label)
			return 1;
		snprintf(line, n, "backend --node %s --to \"%s\"", name, p->groups[H].label);
		return 1;
	}
	if (strcmp(p->kind, "fuse") == 0) {
		if (to < 0) {
			if (src->group >= 0)
				snprintf(line, n, "fuse-out --node %s", name);
			return 1;
		}
		const tui_item *dst = &a->vg.items[to];
		if (dst->group >= 0 && dst->group == src->group)
			return 1;
		quoted_name(a, dst->first, with, sizeof with);
		snprintf(line, n, "fuse-in --node %s --with %s", name, with);
		return 1;
	}
	return 0;
}

/* What a drag of item src out of group G moves across a boundary (to_next:
 * into G+1, else into G-1): the nodes from src to the end (start) of the
 * group; on a partition plan the layers, counted through the layer each of
 * src's nodes goes with (load-time constants are no layers and move with the
 * layer that reads them: partition/chain_layers.h). 0: nothing to move. */
static int drag_count(const tui_app *a, const tui_item *src, int G, int to_next)
{
	const pb_plan *p = a->s->plan;
	int f, l;
	group_range(a, G, &f, &l);
	pb_part_layers L = {0};
	pb_error err = {0};
	if (strcmp(p->kind, "partition") != 0 || !a->s->graph ||
	    pb_part_layers_new(a->s->graph, &L, &err) != PB_OK)
		return to_next ? l - src->first + 1 : src->last - f + 1;
	int lo = -1, hi = -1, k = 0;
	for (int v = src->first; v <= src->last && v < L.n_nodes && v < p->n_nodes; v++)
		if (p->group[v] == G && L.node_layer[v] >= 0) {
			if (lo < 0 || L.node_layer[v] < lo)
				lo = L.node_layer[v];
			if (L.node_layer[v] > hi)
				hi = L.node_layer[v];
		}
	if (lo >= 0 && f >= 0 && f < L.n_nodes && l < L.n_nodes)
		k = to_next ? L.node_layer[l] - lo + 1 : hi - L.node_layer[f] + 1;
	pb_part_layers_free(&L);
	return k > 0 ? k : 0;
}

static void mouse_event(tui_app *a)
{
	MEVENT ev;
	if (getmouse(&ev) != OK)
		return;
	int cy = ev.y - 1, cx = ev.x;
	int in_canvas = cy >= 0 && cy < a->canvas_h && cx < a->canvas_w;
	char line[768];
	if (ev.bstate & BUTTON4_PRESSED) {
		tui_run(a, "view pan 0 -3");
		return;
	}
#ifdef BUTTON5_PRESSED
	if (ev.bstate & BUTTON5_PRESSED) {
		tui_run(a, "view pan 0 3");
		return;
	}
#endif
	if (!in_canvas && (ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) && cy >= 0 &&
	    cy < a->canvas_h && cx > a->canvas_w) {
		int g = tui_side_hit(a, cy);
		int f, l;
		if (g >= 0) {
			group_range(a, g, &f, &l);
			if (f >= 0) {
				snprintf(line, sizeof line, "view select %d", f);
				tui_run(a, line);
			}
		}
		return;
	}
	if (!in_canvas)
		return;
	int item = tui_canvas_hit(a, cy, cx);
	if (ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) {
		a->drag_node = item >= 0 ? item : -1;
		if (item >= 0) {
			snprintf(line, sizeof line, "view select %d", a->vg.items[item].first);
			tui_run(a, line);
		}
		if (ev.bstate & BUTTON1_CLICKED)
			a->drag_node = -1;
		return;
	}
	if ((ev.bstate & BUTTON1_RELEASED) && a->drag_node >= 0) {
		int from = a->drag_node;
		a->drag_node = -1;
		if (item == from || !a->s->plan)
			return;
		if (drop_edit(a, from, item, line, sizeof line)) {
			if (line[0])
				tui_run(a, line);
			return;
		}
		if (item < 0)
			return;
		const tui_item *src = &a->vg.items[from], *dst = &a->vg.items[item];
		int G = src->group, H = dst->group, f, l;
		if (G < 0 || H < 0 || H == G)
			return;
		group_range(a, G, &f, &l);
		if (H == G + 1 && f >= 0)
			snprintf(line, sizeof line, "boundary %d %d", G, -drag_count(a, src, G, 1));
		else if (H == G - 1 && f >= 0)
			snprintf(line, sizeof line, "boundary %d %d", G - 1,
			         drag_count(a, src, G, 0));
		else {
			tui_out(a, 1,
			        "drag a layer onto the next or previous group (from %d to %d)", G,
			        H);
			return;
		}
		tui_run(a, line);
	}
}

static void mouse_apply(tui_app *a)
{
	int on = (int)pb_view_get_int(a->s->view, "mouse", 1);
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

static const pb_opt tui_opts[] = {PB_OPTS_LAYOUT,
                                  PB_OPTS_GRAPH,
                                  {"no-mouse", 0, PB_OPT_FLAG, NULL, "do not capture the mouse"},
                                  {"session", 's', PB_OPT_STR, "FILE", "open a saved session"},
                                  PB_OPTS_END};

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
		out_add(a, 0, obuf);
	free(obuf);
	return rc;
}

static void app_free(tui_app *a)
{
	tui_vg_free(&a->vg);
	tui_branch_free(a);
	windows_free(a);
	for (int i = 0; i < TUI_OUT_LINES; i++)
		free(a->out[i]);
	if (a->timing)
		fclose(a->timing);
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
		a->timing = fopen(tpath, "a");
	setlocale(LC_ALL, "");
	a->utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	glp_term_out(GLP_OFF);
	capture_start(a);
	if (!initscr()) {
		capture_stop(a);
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
	windows_make(a);
	mouse_apply(a);
	tui_out(a, 0, "partbench workbench: ? help, : command, / search, q quit");
	tui_signals_install();
	tui_recover_offer(a, pb_args_str(&args, "session", NULL));
	if (a->s->graph && !pb_view_get(a->s->view, "sel", NULL, (char[8]){0}, 8))
		tui_view_start(a);
	tui_vg_update(a);
	tui_canvas_fit(a);
	a->redraw |= PB_REDRAW_ALL;
	while (!a->quit) {
		note_plan(a);
		if (tui_signal_pending()) {
			killed = tui_signal_pending();
			saved = tui_recover_write(a, rpath, sizeof rpath);
			break;
		}
		if (a->job) {
			tui_job_pump(a);
			a->redraw |= PB_REDRAW_STATUS;
		}
		capture_poll(a);
		if (tui_vg_poll(a)) {
			tui_canvas_fit(a);
			a->redraw |= PB_REDRAW_ALL;
		}
		if (a->redraw & PB_RELAYOUT) {
			tui_vg_update(a);
			a->redraw &= ~PB_RELAYOUT;
		}
		tui_draw(a);
		WINDOW *in = a->wcmd ? a->wcmd : stdscr;
		keypad(in, TRUE);
		wtimeout(in, a->job ? 0 : a->vg.job ? 30 : 1000);
		int ch = wgetch(in);
		if (ch == ERR)
			continue; /* the loop's top reads signals and hang-ups */
		a->t_key = tui_now();
		a->key_for_timing = ch;
		if (ch == KEY_RESIZE) {
			windows_make(a);
			continue;
		}
		if (a->too_small) {
			if (ch == 'q')
				a->quit = 1;
			continue;
		}
		if (ch == KEY_MOUSE)
			mouse_event(a);
		else
			tui_key(a, ch);
		mouse_apply(a);
	}
	tui_job_abandon(a);
	pb_session_unlisten(a->s, on_session, a);
	if (a->timing)
		tui_timing_log(a, "session_s %.3f\n", tui_now() - a->t_start);
	endwin();
	capture_stop(a);
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
