/*
 * cmdline.c — the bottom-row prompt for ':' commands and '/' searches.
 *
 * A small line editor: insert/delete at the cursor, Left/Right/Home/End,
 * Ctrl-U clears, Up/Down walk the history, Esc cancels, Enter accepts. For
 * ':' Tab completes the command name from the command table
 * (pb_cmd_complete): a unique match is inserted, several are listed in the
 * output pane and their common prefix is inserted. The buffer holds UTF-8
 * bytes; the cursor always sits on a character boundary.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "app.h"

#define HIST_MAX 64

static char *history[HIST_MAX];
static int n_history;

static void hist_add(const char *line)
{
	if (!line[0] || (n_history && strcmp(history[n_history - 1], line) == 0))
		return;
	if (n_history == HIST_MAX) {
		free(history[0]);
		memmove(history, history + 1, sizeof history[0] * (HIST_MAX - 1));
		n_history--;
	}
	history[n_history++] = strdup(line);
}

static void complete(tui_app *a, char *buf, size_t len, size_t *cur)
{
	size_t wl = strcspn(buf, " ");
	if (*cur > wl)
		return; /* only the command name is completed */
	char prefix[64];
	snprintf(prefix, sizeof prefix, "%.*s", (int)wl, buf);
	const char *m[128];
	int n = pb_cmd_complete(prefix, m, 128);
	if (n == 0) {
		tui_out(a, 1, "no command starts with '%s'", prefix);
		return;
	}
	size_t common = strlen(m[0]);
	for (int i = 1; i < n; i++) {
		size_t k = 0;
		while (k < common && m[i][k] == m[0][k])
			k++;
		common = k;
	}
	if (n > 1) {
		char list[1024];
		size_t k = 0;
		list[0] = 0;
		for (int i = 0; i < n && k < sizeof list - 40; i++)
			k += (size_t)snprintf(list + k, sizeof list - k, "%s ", m[i]);
		tui_out(a, 0, "%s", list);
	}
	char rest[1024];
	snprintf(rest, sizeof rest, "%s", buf + wl);
	snprintf(buf, len, "%.*s%s%s", (int)common, m[0], n == 1 && !rest[0] ? " " : "", rest);
	*cur = common + (n == 1 && !rest[0] ? 1 : 0);
}

int tui_prompt(tui_app *a, const char *prompt, int with_completion, char *buf, size_t len)
{
	size_t cur = 0;
	int hpos = n_history;
	buf[0] = 0;
	curs_set(1);
	for (;;) {
		WINDOW *w = a->wcmd;
		if (a->job) { /* the job keeps running while the user types */
			tui_job_pump(a);
			a->redraw |= PB_REDRAW_STATUS;
			tui_draw(a);
		}
		wtimeout(w, a->job ? 10 : -1);
		werase(w);
		int W = getmaxx(w), plen = (int)strlen(prompt);
		/* scroll the text so that the cursor is visible */
		int start = (int)cur + plen >= W - 1 ? (int)cur + plen - W + 2 : 0;
		while (start > 0 && ((unsigned char)buf[start] & 0xC0) == 0x80)
			start++;
		mvwaddstr(w, 0, 0, prompt);
		waddnstr(w, buf + start, W - plen - 1);
		wmove(w, 0, plen + (int)cur - start);
		wnoutrefresh(w);
		doupdate();
		wint_t ch;
		int r = wget_wch(w, &ch);
		if (tui_signal_pending()) {
			curs_set(0);
			buf[0] = 0;
			return 0;
		}
		if (r == ERR)
			continue;
		if (r == KEY_CODE_YES) {
			if (ch == KEY_RESIZE) {
				a->redraw |= PB_REDRAW_ALL;
				tui_draw(a);
			} else if (ch == KEY_LEFT && cur > 0) {
				do
					cur--;
				while (cur > 0 && ((unsigned char)buf[cur] & 0xC0) == 0x80);
			} else if (ch == KEY_RIGHT && buf[cur]) {
				do
					cur++;
				while (buf[cur] && ((unsigned char)buf[cur] & 0xC0) == 0x80);
			} else if (ch == KEY_HOME) {
				cur = 0;
			} else if (ch == KEY_END) {
				cur = strlen(buf);
			} else if (ch == KEY_BACKSPACE && cur > 0) {
				size_t e = cur;
				do
					cur--;
				while (cur > 0 && ((unsigned char)buf[cur] & 0xC0) == 0x80);
				memmove(buf + cur, buf + e, strlen(buf + e) + 1);
			} else if (ch == KEY_DC && buf[cur]) {
				size_t e = cur + 1;
				while (buf[e] && ((unsigned char)buf[e] & 0xC0) == 0x80)
					e++;
				memmove(buf + cur, buf + e, strlen(buf + e) + 1);
			} else if ((ch == KEY_UP || ch == KEY_DOWN) && n_history) {
				hpos += ch == KEY_UP ? -1 : 1;
				hpos = hpos < 0 ? 0 : hpos > n_history ? n_history : hpos;
				snprintf(buf, len, "%s", hpos < n_history ? history[hpos] : "");
				cur = strlen(buf);
			} else if (ch == KEY_ENTER) {
				break;
			}
			continue;
		}
		if (ch == 27 || ch == 3) { /* Esc, Ctrl-C */
			curs_set(0);
			buf[0] = 0;
			a->redraw |= PB_REDRAW_STATUS;
			return 0;
		}
		if (ch == '\n' || ch == '\r')
			break;
		if (ch == '\t' && with_completion) {
			complete(a, buf, len, &cur);
			tui_out_draw(a);
			wnoutrefresh(a->wout);
			continue;
		}
		if (ch == 127 || ch == 8) {
			if (cur > 0) {
				size_t e = cur;
				do
					cur--;
				while (cur > 0 && ((unsigned char)buf[cur] & 0xC0) == 0x80);
				memmove(buf + cur, buf + e, strlen(buf + e) + 1);
			}
			continue;
		}
		if (ch == 21) { /* Ctrl-U */
			buf[0] = 0;
			cur = 0;
			continue;
		}
		if (ch < 32)
			continue;
		char mb[MB_LEN_MAX];
		mbstate_t st;
		memset(&st, 0, sizeof st);
		size_t n = wcrtomb(mb, (wchar_t)ch, &st);
		if (n == (size_t)-1 || strlen(buf) + n + 1 > len)
			continue;
		memmove(buf + cur + n, buf + cur, strlen(buf + cur) + 1);
		memcpy(buf + cur, mb, n);
		cur += n;
	}
	curs_set(0);
	hist_add(buf);
	a->redraw |= PB_REDRAW_STATUS;
	return 1;
}

int tui_ask(tui_app *a, const char *question, const char *keys)
{
	int answer = 0;
	for (;;) {
		if (a->job) {
			tui_job_pump(a);
			a->redraw |= PB_REDRAW_STATUS;
		}
		tui_draw(a);
		WINDOW *w = a->wcmd;
		werase(w);
		wattron(w, A_BOLD);
		mvwaddnstr(w, 0, 0, question, getmaxx(w) - 1);
		wattroff(w, A_BOLD);
		wnoutrefresh(w);
		doupdate();
		wtimeout(w, a->job ? 10 : -1);
		int ch = wgetch(w);
		if (tui_signal_pending())
			break;
		if (ch == ERR || ch == KEY_MOUSE)
			continue;
		if (ch == KEY_RESIZE) {
			a->redraw |= PB_REDRAW_ALL;
			continue;
		}
		if (ch == 27 || ch == 3)
			break;
		if (ch > 0 && ch < 256 && strchr(keys, ch)) {
			answer = ch;
			break;
		}
	}
	werase(a->wcmd);
	wnoutrefresh(a->wcmd);
	a->redraw |= PB_REDRAW_STATUS;
	return answer;
}
