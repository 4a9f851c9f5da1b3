/*
 * output.c — the output pane's ring of the last TUI_OUT_LINES lines.
 *
 * A command's output is split into lines (tabs, carriage returns and other
 * control characters become spaces). A line equal to the newest line kept,
 * or equal to it but for its last number (a counter: RL's "..., 17
 * episodes"), is counted on that row instead of taking a new one, and the
 * row shows the newest text: a solver stepped 100 times after it finished
 * ("proved optimal (done)" x100) or a training run's per-episode lines take
 * one row each while nothing else in them changes, shown with their count.
 * out_total counts the rows added, which is what the ':' line compares
 * against the pane's height to decide on the pager.
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

/* The span [*b, *e) of the last run of digits in s (n bytes); 0 when none. */
static int last_number(const char *s, size_t n, size_t *b, size_t *e)
{
	size_t i = n;
	while (i > 0 && !(s[i - 1] >= '0' && s[i - 1] <= '9'))
		i--;
	if (i == 0)
		return 0;
	*e = i;
	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	*b = i;
	return 1;
}

static int same_char(char kept, char c)
{
	return kept == ((unsigned char)c < 32 ? ' ' : c);
}

/* 1 when p (n bytes) is the newest line again, or the newest line with only
 * its last number changed (a counter: "..., 17 episodes", "..., 18 episodes"). */
static int repeats(const tui_outline *last, const char *p, size_t n)
{
	const char *t = last->text;
	size_t tn = strlen(t), tb, te, pb, pe;
	if (tn == n) {
		size_t i = 0;
		while (i < n && same_char(t[i], p[i]))
			i++;
		if (i == n)
			return 1;
	}
	if (!last_number(t, tn, &tb, &te) || !last_number(p, n, &pb, &pe) || tn - te != n - pe ||
	    tb != pb)
		return 0;
	for (size_t i = 0; i < tb; i++)
		if (!same_char(t[i], p[i]))
			return 0;
	for (size_t i = 0; te + i < tn; i++)
		if (!same_char(t[te + i], p[pe + i]))
			return 0;
	return 1;
}

static char *line_copy(const char *p, size_t n)
{
	char *c = strndup(p, n);
	for (char *q = c; q && *q; q++)
		if ((unsigned char)*q < 32) /* tabs, carriage returns, escapes */
			*q = ' ';
	return c;
}

static void add_line(tui_app *a, int is_err, const char *p, size_t n)
{
	if (a->n_out > 0) {
		tui_outline *last = &a->out[newest(a)];
		if (last->text && last->err == is_err && repeats(last, p, n)) {
			char *c = line_copy(p, n); /* the newest counter value shows */
			if (c) {
				free(last->text);
				last->text = c;
			}
			last->repeat++;
			last->gen = a->plan_gen;
			return;
		}
	}
	tui_outline *l = &a->out[a->out_head];
	free(l->text);
	l->text = line_copy(p, n);
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
