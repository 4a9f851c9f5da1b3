/*
 * mode_normal.c — the normal mode: keys of the key table (keymap.c) run
 * their commands, the '?' help is built from it, clicks go to the views.
 *
 * Placeholders of a key's command are filled from the selection before
 * running: %s selected node id, %g its plan group, %p the group before it,
 * %r the node range "FIRST LAST" of the selected box, %b its first node (a
 * hidden constant's box is the one it feeds), %C 1 when boxes of constants
 * only are hidden and 0 when shown (so that 'C' toggles them). Entries
 * starting with '@' are input modes of the terminal itself, handled here.
 */
#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "keymap.h"
#include "mode_cmdline.h"
#include "mode_normal.h"
#include "mode_pager.h"
#include "output.h"
#include "quit.h"
#include "run.h"
#include "spec_cands.h"
#include "viewgraph.h"
#include "views.h"

static const struct {
	const char *action, *what;
} ACTIONS[] = {
    {"@command", "type a command (Tab completes, Up/Down history)"},
    {"@search", "search node names and ops (POSIX regex; runs 'find')"},
    {"@help", "this help"},
    {"@output", "page through all command output"},
    {"@refresh", "repaint the screen"},
    {"@cancel", "cancel the running job"},
    {"@interrupt", "cancel the running job; with none, ask whether to quit"},
    {"@suspend", "suspend to the shell (fg resumes)"},
    {"@quit", "quit (asks to save unsaved changes)"},
    {"@spec-prev", "shard plan: the inspector's previous candidate spec of the operator"},
    {"@spec-next", "shard plan: the inspector's next candidate spec of the operator"},
    {"@spec-pin", "shard plan: pin the operator to the inspector's spec (runs 'pin')"},
};

void tui_keys_help(FILE *out)
{
	fprintf(out, "Keys (each runs the command shown; %%s node, %%g group, %%p group-1, %%r "
	             "box range,\n%%b box's first node, %%C 1 while constants are hidden, else "
	             "0)\n\n");
	size_t n_keys;
	const tui_binding *keys = tui_keymap(&n_keys);
	for (size_t i = 0; i < n_keys; i++) {
		char kb[16], word[32];
		const char *what = NULL;
		if (keys[i].cmd[0] == '@') {
			for (size_t k = 0; k < sizeof ACTIONS / sizeof ACTIONS[0]; k++)
				if (strcmp(ACTIONS[k].action, keys[i].cmd) == 0)
					what = ACTIONS[k].what;
			fprintf(out, "  %-10s %s\n", tui_key_label(keys[i].key, kb, sizeof kb),
			        what ? what : keys[i].cmd);
			continue;
		}
		sscanf(keys[i].cmd, "%31s", word);
		const pb_command *c = pb_cmd_find(word);
		what = c ? c->summary : "(command not in this build)";
		if (strstr(keys[i].cmd, "constants=%C"))
			what = "show / hide boxes of constants only (weight copies)";
		fprintf(out, "  %-10s %-30s %s\n", tui_key_label(keys[i].key, kb, sizeof kb),
		        keys[i].cmd, what);
	}
	fprintf(out, "\nMouse: click selects a node or a table row; drag a node onto the next or\n"
	             "previous group to move the layers in between ('boundary'); on a map plan\n"
	             "onto a box of another backend ('backend'); on a fuse plan onto a box\n"
	             "('fuse-in') or empty canvas ('fuse-out'); on a shard plan onto a row of\n"
	             "the operator's candidate specs in the inspector ('pin'); wheel pans.\n\n");
	fprintf(out, "Commands (:COMMAND --help for options):\n");
}

/* Fills placeholders; returns 0 when one is unavailable (message shown). */
static int expand(tui_app *a, const char *tmpl, char *buf, size_t len)
{
	int sel = tui_selected(a);
	size_t k = 0;
	for (const char *p = tmpl; *p && k + 1 < len; p++) {
		if (*p != '%' || !p[1]) {
			buf[k++] = *p;
			continue;
		}
		char c = *++p;
		long v = -1, v2 = -1;
		if (c == 'C') { /* the opposite of the current "constants" view key */
			k += (size_t)snprintf(buf + k, len - k, "%d", !a->vg.show_consts);
			if (k >= len)
				k = len - 1;
			continue;
		}
		if (sel < 0) {
			tui_out(a, 1, "'%s': no node selected (open a model; '.' selects)", tmpl);
			return 0;
		}
		if (c == 's') {
			v = sel;
		} else if (c == 'g' || c == 'p') {
			v = tui_group_of(a, sel) - (c == 'p');
			if (tui_group_of(a, sel) < 0) {
				tui_out(a, 1, "'%s': the selection has no group (%s)", tmpl,
				        a->s->plan ? "it is in no group of the plan"
				                   : "make a plan first");
				return 0;
			}
			if (v < 0) { /* '{' '}' on the first group: no boundary at its start */
				tui_out(
				    a, 1,
				    "'%s': the selection is in group 0, which has no group before "
				    "it (no boundary at its start; '<' and '>' move its end)",
				    tmpl);
				return 0;
			}
		} else if (c == 'b') { /* the selected box's first node */
			int item = tui_vg_item_near(a, sel);
			v = item >= 0 ? a->vg.items[item].first : sel;
		} else if (c == 'r') {
			/* a hidden constant: the box it feeds */
			int item = tui_vg_item_near(a, sel);
			if (item < 0) {
				tui_out(a, 1, "'%s': no box drawn", tmpl);
				return 0;
			}
			const tui_item *it = &a->vg.items[item];
			if (!it->block) {
				tui_out(a, 1, "'%s': the selected box is a single node", tmpl);
				return 0;
			}
			v = it->first;
			v2 = it->last;
		} else {
			buf[k++] = c;
			continue;
		}
		k += (size_t)snprintf(buf + k, len - k, v2 >= 0 ? "%ld %ld" : "%ld", v, v2);
		if (k >= len)
			k = len - 1;
	}
	buf[k] = 0;
	return 1;
}

static void help_cmd(void *ud, const pb_command *c)
{
	fprintf((FILE *)ud, "  %-12s %s\n", c->name, c->summary);
}

static int action(tui_app *a, const char *act)
{
	if (strcmp(act, "@command") == 0) {
		tui_cmdline_open(a, ":", 1);
	} else if (strcmp(act, "@search") == 0) {
		tui_cmdline_open(a, "/", 0);
	} else if (strcmp(act, "@help") == 0) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		if (!f)
			return 0;
		tui_keys_help(f);
		pb_cmd_foreach(help_cmd, f);
		fclose(f);
		tui_pager_open(a, "help (q closes)", text);
		free(text);
	} else if (strcmp(act, "@output") == 0) {
		char *text = tui_out_text(a, a->n_out);
		if (text)
			tui_pager_open(a, "output (q closes)", text);
		free(text);
	} else if (strcmp(act, "@refresh") == 0) {
		clearok(curscr, TRUE);
		return PB_REDRAW_ALL;
	} else if (strcmp(act, "@cancel") == 0) {
		if (a->job)
			tui_job_cancel(a);
	} else if (strcmp(act, "@interrupt") == 0) {
		if (a->job)
			tui_job_cancel(a);
		else
			return tui_quit_ask(a, 1);
	} else if (strcmp(act, "@suspend") == 0) {
		return tui_suspend(a);
	} else if (strcmp(act, "@spec-prev") == 0 || strcmp(act, "@spec-next") == 0) {
		return tui_cands_move(a, act[6] == 'n' ? 1 : -1);
	} else if (strcmp(act, "@spec-pin") == 0) {
		char line[512], why[300];
		int sel = tui_selected(a);
		if (tui_cands_pin_line(a, sel, a->cands.cursor, line, sizeof line, why, sizeof why))
			return tui_run(a, line, NULL);
		tui_out(a, 1, "'=': %s", why);
	} else if (strcmp(act, "@quit") == 0) {
		if (a->job)
			tui_out(a, 1, "a job is running: Esc or Ctrl-C cancels it first");
		else
			return tui_quit_ask(a, 0);
	}
	return PB_REDRAW_STATUS;
}

static int normal_key(tui_app *a, void *data, int key, int code)
{
	(void)data;
	if (!code && (key == 127 || key == 8))
		key = KEY_BACKSPACE;
	else if ((!code && key == '\r') || (code && key == KEY_ENTER))
		key = '\n';
	else if (!code && key >= KEY_MIN)
		key = -1; /* a character that no key of the table is */
	size_t n_keys;
	const tui_binding *keys = tui_keymap(&n_keys);
	for (size_t i = 0; key >= 0 && i < n_keys; i++) {
		if (keys[i].key != key)
			continue;
		if (keys[i].cmd[0] == '@')
			return action(a, keys[i].cmd);
		char line[512];
		if (expand(a, keys[i].cmd, line, sizeof line))
			return tui_run(a, line, NULL);
		return PB_REDRAW_STATUS;
	}
	char kb[16];
	tui_out(a, 1, "key %s is not bound (? shows the keys)",
	        key >= 0 ? tui_key_label(key, kb, sizeof kb) : "(character)");
	return 0;
}

/* The wheel pans wherever it turns; a click goes to the view under it,
 * which answers with the command to run. */
static int normal_mouse(tui_app *a, void *data, const MEVENT *ev)
{
	(void)data;
	if (ev->bstate & BUTTON4_PRESSED)
		return tui_run(a, "view pan 0 -3", NULL);
#ifdef BUTTON5_PRESSED
	if (ev->bstate & BUTTON5_PRESSED)
		return tui_run(a, "view pan 0 3", NULL);
#endif
	char line[768];
	int flags = tui_views_mouse(a, ev, line, sizeof line);
	if (line[0])
		flags |= tui_run(a, line, NULL);
	return flags;
}

static void normal_draw(tui_app *a, void *data)
{
	(void)data;
	werase(a->wcmd);
	wnoutrefresh(a->wcmd);
}

const tui_mode tui_mode_normal = {
    .name = "normal", .key = normal_key, .mouse = normal_mouse, .draw = normal_draw};
