/*
 * output.c — the output pane's ring of the last TUI_OUT_LINES lines.
 *
 * A command's output is split into lines (tabs, carriage returns and other
 * control characters become spaces). A line equal to the newest line kept is counted on it instead
 * of being kept again, so a solver stepped 100 times after it finished ("proved optimal (done)"
 * x100) or a training run's repeated lines take one row, shown with their count. out_total counts
 * the rows added, which is what the
 * ':' line compares against the pane's height to decide on the pager.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

static int newest(const tui_app *a)
{
	return (a->out_head - 1 + TUI_OUT_LINES) % TUI_OUT_LINES;
}

static void add_line(tui_app *a, int is_err, const char *p, size_t n)
{
	if (a->n_out > 0) {
		tui_outline *last = &a->out[newest(a)];
		if (last->text && last->err == is_err && strlen(last->text) == n) {
			int same = 1;
			for (size_t i = 0; same && i < n; i++)
				same = last->text[i] == ((unsigned char)p[i] < 32 ? ' ' : p[i]);
			if (same) {
				last->repeat++;
				last->gen = a->plan_gen;
				return;
			}
		}
	}
	tui_outline *l = &a->out[a->out_head];
	free(l->text);
	l->text = strndup(p, n);
	for (char *c = l->text; c && *c; c++)
		if ((unsigned char)*c < 32) /* tabs, carriage returns, escapes */
			*c = ' ';
	l->err = is_err;
	l->gen = a->plan_gen;
	l->repeat = 1;
	a->out_head = (a->out_head + 1) % TUI_OUT_LINES;
	if (a->n_out < TUI_OUT_LINES)
		a->n_out++;
	a->out_total++;
}

void tui_out_add(tui_app *a, int is_err, const char *text)
{
	const char *p = text;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		add_line(a, is_err, p, n);
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
	tui_out_add(a, is_err, buf);
}

const tui_outline *tui_out_line(const tui_app *a, int n, int r)
{
	if (n > a->n_out)
		n = a->n_out;
	if (r < 0 || r >= n)
		return NULL;
	return &a->out[(a->out_head - n + r + TUI_OUT_LINES) % TUI_OUT_LINES];
}

void tui_out_format(const tui_app *a, const tui_outline *l, char *buf, size_t len)
{
	const char *t = l->text ? l->text : "";
	if (l->repeat > 1)
		snprintf(buf, len, "%s  %s %ld", t, a->utf8 ? "… ×" : "... x", l->repeat);
	else
		snprintf(buf, len, "%s", t);
}

char *tui_out_text(const tui_app *a, long n)
{
	char *text = NULL, line[1300];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	if (n > a->n_out)
		n = a->n_out;
	for (int r = 0; r < n; r++) {
		tui_out_format(a, tui_out_line(a, (int)n, r), line, sizeof line);
		fprintf(f, "%s\n", line);
	}
	fclose(f);
	return text;
}

void tui_out_free(tui_app *a)
{
	for (int i = 0; i < TUI_OUT_LINES; i++) {
		free(a->out[i].text);
		a->out[i].text = NULL;
	}
}
