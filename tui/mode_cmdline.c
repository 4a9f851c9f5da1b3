/*
 * mode_cmdline.c — the command-line mode: the bottom-row prompt for ':'
 * commands and '/' searches (mode_cmdline.h).
 *
 * A small line editor: insert/delete at the cursor, Left/Right/Home/End,
 * Ctrl-U clears, Up/Down walk the history, Esc cancels, Enter accepts. For
 * ':' Tab completes the word before the cursor: the command name (from the
 * command table), an option name of the command typed (from its option
 * table), a value of an option that lists its values (pb_opt.choices:
 * partition --method from the method registry), or a file path (for an
 * option whose value is a FILE or DIR, and for the positional arguments of
 * commands taking files): a unique match is
 * inserted, several are listed in the output pane and their common prefix
 * is inserted. The buffer holds UTF-8
 * bytes; the cursor always sits on a character boundary. Enter leaves the
 * mode and runs the line: ':q' with unsaved changes asks first (quit.h), a
 * command whose output is longer than the pane opens the pager (unless it
 * reported progress: training and repeat logs stay in the pane); '/' runs
 * `find -- TEXT`.
 */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <wchar.h>

#include "mode_cmdline.h"
#include "mode_pager.h"
#include "output.h"
#include "quit.h"
#include "run.h"

#define HIST_MAX 64
#define TUI_COMPLETE_MAX 128

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

/* Candidates for completing one word, kept sorted and unique. */
typedef struct cands {
	int n;
	char *v[TUI_COMPLETE_MAX];
} cands;

static void cands_add(cands *c, const char *s)
{
	for (int i = 0; i < c->n; i++)
		if (strcmp(c->v[i], s) == 0)
			return;
	if (c->n < TUI_COMPLETE_MAX) {
		char *d = strdup(s);
		if (d)
			c->v[c->n++] = d;
	}
}

static void cands_free(cands *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->v[i]);
	c->n = 0;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Option names of the command ("--name"), from its own option table. */
static void complete_options(const pb_command *c, const char *word, cands *out)
{
	size_t wl = strlen(word);
	char opt[80];
	for (const pb_opt *o = c->opts; o && o->name; o++) {
		snprintf(opt, sizeof opt, "--%s", o->name);
		if (strncmp(opt, word, wl) == 0)
			cands_add(out, opt);
	}
	if (strncmp("--help", word, wl) == 0)
		cands_add(out, "--help");
}

/* Files and folders whose path starts with word; folders end in '/'. */
static void complete_paths(const char *word, cands *out)
{
	const char *slash = strrchr(word, '/');
	char dir[PATH_MAX];
	const char *base = slash ? slash + 1 : word;
	if (slash)
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - word + 1), word);
	else
		dir[0] = '\0';
	/* door: lists names for Tab completion; no file is opened */
	DIR *d = opendir(dir[0] ? dir : ".");
	if (!d)
		return;
	size_t bl = strlen(base);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (e->d_name[0] == '.' && base[0] != '.')
			continue; /* hidden files only when asked for */
		if (strncmp(e->d_name, base, bl) != 0)
			continue;
		char path[PATH_MAX + 2];
		struct stat st;
		snprintf(path, sizeof path, "%s%s", dir, e->d_name);
		int is_dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
		if (is_dir)
			snprintf(path, sizeof path, "%s%s/", dir, e->d_name);
		cands_add(out, path);
	}
	closedir(d);
}

/* The option of c as typed (--name, -x); NULL when c has none such. */
static const pb_opt *option_typed(const pb_command *c, const char *w)
{
	for (const pb_opt *o = c->opts; o && o->name; o++)
		if ((w[0] == '-' && w[1] == '-' && strcmp(w + 2, o->name) == 0) ||
		    (w[0] == '-' && w[1] && w[1] == o->short_name && !w[2]))
			return o;
	return NULL;
}

/* Does the option (as typed: --name, -x) take a file or folder? */
static int option_takes_path(const pb_command *c, const char *w)
{
	const pb_opt *o = option_typed(c, w);
	if (!o)
		return 0;
	const char *m = o->metavar ? o->metavar : "";
	return o->type != PB_OPT_FLAG &&
	       (strstr(m, "FILE") || strstr(m, "DIR") || strstr(m, "PATH") || strstr(m, "LOG"));
}

/* The values of an option with a list of them (pb_opt.choices, e.g.
 * partition --method from the method registry) that start with word. */
static void complete_choices(const pb_opt *o, const char *prefix, const char *word, cands *out)
{
	const char *v[TUI_COMPLETE_MAX];
	int n = o->choices(v, TUI_COMPLETE_MAX);
	size_t wl = strlen(word);
	char full[PATH_MAX + 80];
	for (int i = 0; i < n; i++)
		if (strncmp(v[i], word, wl) == 0) {
			snprintf(full, sizeof full, "%s%s", prefix, v[i]);
			cands_add(out, full);
		}
}

/* Do the command's positional arguments name files (its usage says MODEL,
 * FILE, SESSION, SCRIPT, DIR ...)? */
static int positional_takes_path(const pb_command *c)
{
	static const char *words[] = {"MODEL", "FILE", "SESSION", "SCRIPT", "DIR", "PATH", ".lua"};
	if (c->flags & PB_CMD_GRAPH)
		return 1;
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (c->usage && strstr(c->usage, words[i]))
			return 1;
	return 0;
}

/* Tab on the ':' line: the word before the cursor is completed as a command
 * name (first word), an option of the command typed ("--" + Tab lists
 * them, from the command's option table), a value of an option that lists
 * its values (after it, or after its '='), or a path (after an option that
 * takes a file, or as a positional argument of a command that takes files).
 * One match is inserted (with a space after it unless it is a folder);
 * several insert their common prefix and are listed in the output pane. */
static void complete(tui_app *a, char *buf, size_t len, size_t *cur)
{
	size_t ws = *cur;
	while (ws > 0 && buf[ws - 1] != ' ')
		ws--;
	char word[PATH_MAX];
	snprintf(word, sizeof word, "%.*s", (int)(*cur - ws), buf + ws);
	cands m = {0};
	const char *what = "command";
	if (strspn(buf, " ") >= ws) { /* the first word */
		const char *names[TUI_COMPLETE_MAX];
		int n = pb_cmd_complete(word, names, TUI_COMPLETE_MAX);
		for (int i = 0; i < n; i++)
			cands_add(&m, names[i]);
	} else {
		char name[64], prev[128] = "";
		size_t s0 = strspn(buf, " ");
		snprintf(name, sizeof name, "%.*s", (int)strcspn(buf + s0, " "), buf + s0);
		const pb_command *c = pb_cmd_find(name);
		if (!c) {
			tui_out(a, 1, "no command '%s' (Tab on the first word lists them)", name);
			return;
		}
		size_t pe = ws;
		while (pe > 0 && buf[pe - 1] == ' ')
			pe--;
		size_t ps = pe;
		while (ps > 0 && buf[ps - 1] != ' ')
			ps--;
		snprintf(prev, sizeof prev, "%.*s", (int)(pe - ps), buf + ps);
		char *eq = word[0] == '-' ? strchr(word, '=') : NULL;
		const pb_opt *eq_opt = NULL,
		             *prev_opt = prev[0] == '-' ? option_typed(c, prev) : NULL;
		if (eq) {
			*eq = '\0';
			eq_opt = option_typed(c, word);
			*eq = '=';
		}
		if (eq_opt && eq_opt->choices) { /* --method=VALUE */
			what = "value";
			char head[80];
			snprintf(head, sizeof head, "%.*s", (int)(eq - word + 1), word);
			complete_choices(eq_opt, head, eq + 1, &m);
		} else if (prev_opt && prev_opt->choices && word[0] != '-') { /* --method VALUE */
			what = "value";
			complete_choices(prev_opt, "", word, &m);
		} else if (eq) { /* --layout=PATH */
			*eq = '\0';
			int path = option_takes_path(c, word);
			*eq = '=';
			if (!path) {
				tui_out(a, 1, "%s: %.*s takes no file", c->name, (int)(eq - word),
				        word);
				return;
			}
			what = "file";
			cands files = {0};
			complete_paths(eq + 1, &files);
			for (int i = 0; i < files.n; i++) {
				char full[PATH_MAX + 80];
				snprintf(full, sizeof full, "%.*s%s", (int)(eq - word + 1), word,
				         files.v[i]);
				cands_add(&m, full);
			}
			cands_free(&files);
		} else if (word[0] == '-') {
			what = "option";
			complete_options(c, word, &m);
		} else if (prev[0] == '-' ? option_takes_path(c, prev) : positional_takes_path(c)) {
			what = "file";
			complete_paths(word, &m);
		} else {
			tui_out(a, 1, "%s: nothing to complete here (%s)", c->name, c->usage);
			return;
		}
	}
	if (m.n == 0) {
		tui_out(a, 1, "no %s starts with '%s'", what, word);
		return;
	}
	qsort(m.v, (size_t)m.n, sizeof m.v[0], cmp_str);
	size_t common = strlen(m.v[0]);
	for (int i = 1; i < m.n; i++) {
		size_t k = 0;
		while (k < common && m.v[i][k] == m.v[0][k])
			k++;
		common = k;
	}
	if (m.n > 1) {
		char list[1024];
		size_t k = 0;
		list[0] = 0;
		for (int i = 0; i < m.n && k < sizeof list - 80; i++) {
			const char *show = m.v[i];
			const char *sl = strrchr(show, '/');
			if (what[0] == 'v' && strchr(show, '=')) /* --method=VALUE: the value */
				show = strchr(show, '=') + 1;
			else if (what[0] == 'f' && sl && sl[1]) /* files: the name only */
				show = sl + 1;
			else if (what[0] == 'f' && sl) { /* folder "a/b/": "b/" */
				const char *p = sl;
				while (p > show && p[-1] != '/')
					p--;
				show = p;
			}
			k += (size_t)snprintf(list + k, sizeof list - k, "%s ", show);
		}
		if (m.n == TUI_COMPLETE_MAX)
			snprintf(list + k, sizeof list - k, "...");
		tui_out(a, 0, "%s", list);
	}
	int unique = m.n == 1;
	int space = unique && m.v[0][common - 1] != '/';
	char rest[1024];
	snprintf(rest, sizeof rest, "%s", buf + *cur);
	char head[1024];
	snprintf(head, sizeof head, "%.*s", (int)ws, buf);
	if (space && rest[0] == ' ')
		space = 0;
	snprintf(buf, len, "%s%.*s%s%s", head, (int)common, m.v[0], space ? " " : "", rest);
	*cur = ws + common + (size_t)space;
	if (*cur > strlen(buf))
		*cur = strlen(buf);
	cands_free(&m);
}

typedef struct cmdline {
	char prompt[8];
	int complete; /* Tab completes (the ':' line) */
	char buf[1024];
	size_t cur;
	int hpos;
} cmdline;

static void cmdline_close(void *data)
{
	free(data);
}

/* ':q' and ':quit' (no arguments) ask about unsaved changes first. */
static int is_plain_quit(const char *line)
{
	char word[16] = "", extra[8] = "";
	if (sscanf(line, "%15s %7s", word, extra) != 1)
		return 0;
	return strcmp(word, "q") == 0 || strcmp(word, "quit") == 0;
}

/* Enter: the mode has left the stack; runs what was typed. */
static int accept(tui_app *a, const char *prompt, const char *line)
{
	if (!line[0])
		return PB_REDRAW_STATUS;
	if (prompt[0] == '/') {
		char *argv[] = {"find", "--", (char *)line};
		return tui_run_argv(a, 3, argv, NULL);
	}
	if (!a->job && is_plain_quit(line))
		return tui_quit_ask(a, 0);
	/* long output opens the pager, except the log of commands that
	 * reported progress (training, repeat): it stays in the pane */
	long before = a->out_total, calls = a->progress_calls;
	int flags = tui_run(a, line, NULL);
	if (a->out_total - before > a->out_h - 1 && calls == a->progress_calls) {
		char *text = tui_out_text(a, a->out_total - before);
		if (text)
			tui_pager_open(a, "output (q closes)", text);
		free(text);
	}
	return flags;
}

static void del_before(char *buf, size_t *cur)
{
	if (*cur == 0)
		return;
	size_t e = *cur;
	do
		(*cur)--;
	while (*cur > 0 && ((unsigned char)buf[*cur] & 0xC0) == 0x80);
	memmove(buf + *cur, buf + e, strlen(buf + e) + 1);
}

static int code_key(cmdline *c, int ch)
{
	char *buf = c->buf;
	if (ch == KEY_LEFT && c->cur > 0) {
		do
			c->cur--;
		while (c->cur > 0 && ((unsigned char)buf[c->cur] & 0xC0) == 0x80);
	} else if (ch == KEY_RIGHT && buf[c->cur]) {
		do
			c->cur++;
		while (buf[c->cur] && ((unsigned char)buf[c->cur] & 0xC0) == 0x80);
	} else if (ch == KEY_HOME) {
		c->cur = 0;
	} else if (ch == KEY_END) {
		c->cur = strlen(buf);
	} else if (ch == KEY_BACKSPACE) {
		del_before(buf, &c->cur);
	} else if (ch == KEY_DC && buf[c->cur]) {
		size_t e = c->cur + 1;
		while (buf[e] && ((unsigned char)buf[e] & 0xC0) == 0x80)
			e++;
		memmove(buf + c->cur, buf + e, strlen(buf + e) + 1);
	} else if ((ch == KEY_UP || ch == KEY_DOWN) && n_history) {
		c->hpos += ch == KEY_UP ? -1 : 1;
		c->hpos = c->hpos < 0 ? 0 : c->hpos > n_history ? n_history : c->hpos;
		snprintf(buf, sizeof c->buf, "%s", c->hpos < n_history ? history[c->hpos] : "");
		c->cur = strlen(buf);
	} else if (ch == KEY_ENTER) {
		return 1;
	}
	return 0;
}

static int cmdline_key(tui_app *a, void *data, int ch, int code)
{
	cmdline *c = data;
	int enter = code ? code_key(c, ch) : ch == '\n' || ch == '\r';
	if (enter || (!code && (ch == 27 || ch == 3))) { /* Enter, Esc, Ctrl-C */
		char line[sizeof c->buf], prompt[sizeof c->prompt];
		snprintf(line, sizeof line, "%s", enter ? c->buf : "");
		snprintf(prompt, sizeof prompt, "%s", c->prompt);
		if (enter)
			hist_add(line);
		tui_mode_remove(a, &tui_mode_cmdline); /* frees c */
		return enter ? accept(a, prompt, line) : PB_REDRAW_STATUS;
	}
	if (code)
		return 0;
	if (ch == '\t' && c->complete) {
		complete(a, c->buf, sizeof c->buf, &c->cur);
		return PB_REDRAW_STATUS;
	}
	if (ch == 127 || ch == 8) {
		del_before(c->buf, &c->cur);
		return 0;
	}
	if (ch == 21) { /* Ctrl-U */
		c->buf[0] = 0;
		c->cur = 0;
		return 0;
	}
	if (ch < 32)
		return 0;
	char mb[MB_LEN_MAX];
	mbstate_t st;
	memset(&st, 0, sizeof st);
	size_t n = wcrtomb(mb, (wchar_t)ch, &st);
	if (n == (size_t)-1 || strlen(c->buf) + n + 1 > sizeof c->buf)
		return 0;
	memmove(c->buf + c->cur + n, c->buf + c->cur, strlen(c->buf + c->cur) + 1);
	memcpy(c->buf + c->cur, mb, n);
	c->cur += n;
	return 0;
}

static int cmdline_mouse(tui_app *a, void *data, const MEVENT *ev)
{
	(void)a, (void)data, (void)ev;
	return 0;
}

static void cmdline_draw(tui_app *a, void *data)
{
	cmdline *c = data;
	WINDOW *w = a->wcmd;
	werase(w);
	int W = getmaxx(w), plen = (int)strlen(c->prompt), cur = (int)c->cur;
	/* scroll the text so that the cursor is visible */
	int start = cur + plen >= W - 1 ? cur + plen - W + 2 : 0;
	while (start > 0 && ((unsigned char)c->buf[start] & 0xC0) == 0x80)
		start++;
	mvwaddstr(w, 0, 0, c->prompt);
	waddnstr(w, c->buf + start, W - plen - 1);
	wmove(w, 0, plen + cur - start);
	wnoutrefresh(w);
}

const tui_mode tui_mode_cmdline = {.name = "cmdline",
                                   .key = cmdline_key,
                                   .mouse = cmdline_mouse,
                                   .draw = cmdline_draw,
                                   .close = cmdline_close,
                                   .cursor = 1};

void tui_cmdline_open(tui_app *a, const char *prompt, int complete)
{
	cmdline *c = calloc(1, sizeof *c);
	if (!c)
		return;
	snprintf(c->prompt, sizeof c->prompt, "%s", prompt);
	c->complete = complete;
	c->hpos = n_history;
	tui_mode_push(a, &tui_mode_cmdline, c);
}
