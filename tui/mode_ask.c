/*
 * mode_ask.c — the ask mode (mode_ask.h). Keys other than the answers and
 * Esc / Ctrl-C are ignored; the mouse is ignored. The question stays on the
 * bottom row while the loop goes on laying out, running a job and drawing.
 */
#include <stdlib.h>
#include <string.h>

#include "mode_ask.h"

typedef struct ask {
	char question[600];
	char keys[32];
	tui_answer_fn on_answer;
	void *ud;
} ask;

static void ask_close(void *data)
{
	ask *q = data;
	if (q)
		free(q->ud);
	free(q);
}

static int ask_key(tui_app *a, void *data, int key, int code)
{
	ask *q = data;
	int answer = -1;
	if (!code && (key == 27 || key == 3))
		answer = 0;
	else if (!code && key > 0 && key < 256 && strchr(q->keys, key))
		answer = key;
	if (answer < 0)
		return 0;
	tui_answer_fn fn = q->on_answer;
	void *ud = q->ud;
	q->ud = NULL; /* the callback runs after the mode left the stack */
	tui_mode_remove(a, &tui_mode_ask);
	int flags = fn ? fn(a, answer, ud) : 0;
	free(ud);
	return flags | PB_REDRAW_STATUS;
}

static int ask_mouse(tui_app *a, void *data, const MEVENT *ev)
{
	(void)a, (void)data, (void)ev;
	return 0;
}

static void ask_draw(tui_app *a, void *data)
{
	ask *q = data;
	WINDOW *w = a->wcmd;
	werase(w);
	wattron(w, A_BOLD);
	mvwaddnstr(w, 0, 0, q->question, getmaxx(w) - 1);
	wattroff(w, A_BOLD);
	wnoutrefresh(w);
}

const tui_mode tui_mode_ask = {
    .name = "ask", .key = ask_key, .mouse = ask_mouse, .draw = ask_draw, .close = ask_close};

void tui_ask_open(tui_app *a, const char *question, const char *keys, tui_answer_fn on_answer,
                  void *ud)
{
	ask *q = calloc(1, sizeof *q);
	if (!q) {
		free(ud);
		return;
	}
	snprintf(q->question, sizeof q->question, "%s", question);
	snprintf(q->keys, sizeof q->keys, "%s", keys);
	q->on_answer = on_answer;
	q->ud = ud;
	tui_mode_push(a, &tui_mode_ask, q);
}
