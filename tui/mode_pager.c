/*
 * mode_pager.c — the pager mode (mode_pager.h).
 *
 * Keys: j / Down / Enter and k / Up a line, Space / PgDn and b / PgUp a
 * page, g / Home and G / End the ends, l / Right and h / Left eight
 * columns sideways (long lines are cut at the screen's edge, not wrapped,
 * so that tables keep their columns), 0 back to the first column; q and Esc
 * close it. Any other key is ignored (a stray '/' does not close it). A
 * running job keeps running (the job mode's idle) and its spinner shows in
 * the header.
 */
#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "mode_pager.h"

typedef struct pager {
	char title[80];
	char *text;
	const char **lines;
	int *lens;
	int n, top, left, widest;
	WINDOW *w;
} pager;

static void pager_close(void *data)
{
	pager *p = data;
	if (!p)
		return;
	if (p->w)
		delwin(p->w);
	free(p->text);
	free(p->lines);
	free(p->lens);
	free(p);
}

/* Character count of the first len bytes (UTF-8). */
static int chars_in(const char *s, int len)
{
	int c = 0;
	for (int i = 0; i < len; i++)
		c += ((unsigned char)s[i] & 0xC0) != 0x80;
	return c;
}

/* Bytes of s (len bytes) before its character number skip. */
static int skip_chars(const char *s, int len, int skip)
{
	int i = 0;
	for (int c = 0; i < len && c < skip; c++) {
		i++;
		while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
			i++;
	}
	return i;
}

static void clamp(pager *p)
{
	int H = getmaxy(p->w), W = getmaxx(p->w);
	int page = H - 2 > 1 ? H - 2 : 1;
	if (p->top > p->n - page)
		p->top = p->n - page;
	if (p->top < 0)
		p->top = 0;
	if (p->left > p->widest - W / 2)
		p->left = p->widest - W / 2;
	if (p->left < 0)
		p->left = 0;
}

static int pager_key(tui_app *a, void *data, int ch, int code)
{
	pager *p = data;
	int H = getmaxy(p->w);
	int page = H - 2 > 1 ? H - 2 : 1;
	if (code) {
		switch (ch) {
		case KEY_DOWN:
		case KEY_ENTER:
			p->top++;
			break;
		case KEY_UP:
			p->top--;
			break;
		case KEY_NPAGE:
			p->top += page;
			break;
		case KEY_PPAGE:
			p->top -= page;
			break;
		case KEY_HOME:
			p->top = 0;
			break;
		case KEY_END:
			p->top = p->n - page;
			break;
		case KEY_RIGHT:
			p->left += 8;
			break;
		case KEY_LEFT:
			p->left -= 8;
			break;
		default:
			return 0; /* unknown: ignored */
		}
	} else if (ch == 'q' || ch == 27) {
		tui_mode_remove(a, &tui_mode_pager);
		return PB_REDRAW_ALL;
	} else if (ch == 'j' || ch == '\n' || ch == '\r') {
		p->top++;
	} else if (ch == 'k') {
		p->top--;
	} else if (ch == ' ') {
		p->top += page;
	} else if (ch == 'b') {
		p->top -= page;
	} else if (ch == 'g') {
		p->top = 0;
	} else if (ch == 'G') {
		p->top = p->n - page;
	} else if (ch == 'l') {
		p->left += 8;
	} else if (ch == 'h') {
		p->left -= 8;
	} else if (ch == '0') {
		p->left = 0;
	} else {
		return 0; /* unknown: ignored */
	}
	clamp(p);
	return 0;
}

static int pager_mouse(tui_app *a, void *data, const MEVENT *ev)
{
	(void)a, (void)data, (void)ev;
	return 0;
}

static int pager_resize(tui_app *a, void *data)
{
	(void)a;
	pager *p = data;
	if (p->w)
		delwin(p->w);
	p->w = newwin(0, 0, 0, 0);
	clamp(p);
	return 0;
}

static void pager_draw(tui_app *a, void *data)
{
	pager *p = data;
	WINDOW *w = p->w;
	int H, W;
	getmaxyx(w, H, W);
	werase(w);
	wattron(w, A_REVERSE);
	mvwhline(w, 0, 0, ' ', W);
	char busy[400] = "", cols[64] = "";
	if (a->job) /* the job keeps running under the pager: say so */
		tui_job_status(a, busy, sizeof busy);
	if (p->left > 0) /* scrolled sideways */
		snprintf(cols, sizeof cols, " from col %d", p->left + 1);
	mvwprintw(w, 0, 1, "%s  lines %d-%d of %d%s  (j/k/Space/b/h/l scroll, q closes)%s",
	          p->title, p->n ? p->top + 1 : 0, p->top + H - 1 < p->n ? p->top + H - 1 : p->n,
	          p->n, cols, busy);
	wattroff(w, A_REVERSE);
	for (int r = 1; r < H && p->top + r - 1 < p->n; r++) {
		int k = p->top + r - 1;
		int from = skip_chars(p->lines[k], p->lens[k], p->left);
		int len = skip_chars(p->lines[k] + from, p->lens[k] - from, W);
		mvwaddnstr(w, r, 0, p->lines[k] + from, len);
	}
	touchwin(w);
	wnoutrefresh(w);
}

const tui_mode tui_mode_pager = {.name = "pager",
                                 .key = pager_key,
                                 .mouse = pager_mouse,
                                 .resize = pager_resize,
                                 .draw = pager_draw,
                                 .close = pager_close,
                                 .full_screen = 1};

void tui_pager_open(tui_app *a, const char *title, const char *text)
{
	pager *p = calloc(1, sizeof *p);
	if (!p || !(p->text = strdup(text ? text : ""))) {
		free(p);
		return;
	}
	snprintf(p->title, sizeof p->title, "%s", title);
	int cap = 64;
	p->lines = malloc(sizeof *p->lines * (size_t)cap);
	p->lens = malloc(sizeof *p->lens * (size_t)cap);
	for (const char *s = p->text; p->lines && p->lens && *s;) {
		const char *e = strchr(s, '\n');
		int len = e ? (int)(e - s) : (int)strlen(s);
		if (p->n == cap) {
			cap *= 2;
			const char **nl = realloc(p->lines, sizeof *p->lines * (size_t)cap);
			if (nl)
				p->lines = nl;
			int *nn = realloc(p->lens, sizeof *p->lens * (size_t)cap);
			if (nn)
				p->lens = nn;
			if (!nl || !nn)
				break;
		}
		p->lines[p->n] = s;
		p->lens[p->n++] = len;
		int c = chars_in(s, len);
		if (c > p->widest)
			p->widest = c;
		s += len + (e ? 1 : 0);
	}
	p->w = newwin(0, 0, 0, 0);
	if (!p->lines || !p->lens || !p->w) {
		pager_close(p);
		return;
	}
	keypad(p->w, TRUE);
	tui_mode_push(a, &tui_mode_pager, p);
}
