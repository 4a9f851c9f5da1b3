/*
 * view_output.c — the output pane: the newest lines of the output ring
 * (output.c), newest at the bottom. A line wider than the pane wraps onto
 * the next rows (at character boundaries of its UTF-8 text) instead of
 * being cut; a repeated line shows once with its count. Errors are red,
 * lines written before the last plan change dim (their figures are not of
 * the current plan).
 */
#include <string.h>

#include "output.h"
#include "view_def.h"

/* Byte length of the first `cols` characters of s (UTF-8). */
static size_t chars_bytes(const char *s, int cols)
{
	size_t k = 0;
	for (int c = 0; s[k] && c < cols; c++) {
		k++;
		while (s[k] && ((unsigned char)s[k] & 0xC0) == 0x80)
			k++;
	}
	return k;
}

/* Rows the line takes at width W. */
static int rows_of(const char *s, int W)
{
	int rows = 0;
	do {
		s += chars_bytes(s, W);
		rows++;
	} while (*s);
	return rows;
}

static void output_draw(tui_app *a, WINDOW *w)
{
	int H = getmaxy(w), W = getmaxx(w);
	werase(w);
	tui_hrule(a, w, 0, 0, W);
	mvwaddstr(w, 0, 2, " output (o: all) ");
	int avail = H - 1 < 64 ? H - 1 : 64;
	if (avail <= 0 || W <= 0)
		return;
	/* the newest lines that fill the pane, from the bottom up */
	int n = a->n_out < avail ? a->n_out : avail, used = 0, first = n;
	int rows[64] = {0};
	while (first > 0 && used < avail) {
		char text[1300];
		tui_out_format(a, tui_out_line(a, n, first - 1), text, sizeof text);
		rows[first - 1] = rows_of(text, W);
		used += rows[first - 1];
		first--;
	}
	int y = 1 - (used > avail ? used - avail : 0); /* the oldest may lose its head */
	for (int r = first; r < n; r++) {
		const tui_outline *l = tui_out_line(a, n, r);
		char text[1300];
		tui_out_format(a, l, text, sizeof text);
		attr_t at = l->err                  ? (A_BOLD | (a->color ? COLOR_PAIR(7) : 0))
		            : l->gen != a->plan_gen ? A_DIM
		                                    : 0;
		const char *s = text;
		for (int k = 0; k < rows[r]; k++) {
			size_t b = chars_bytes(s, W);
			if (y >= 1) {
				wattron(w, at);
				mvwaddnstr(w, y, 0, s, (int)b);
				wattroff(w, at);
			}
			s += b;
			y++;
		}
	}
}

const tui_view_def tui_view_output = {.name = "output", .at = TUI_AT_BOTTOM, .draw = output_draw};
