/*
 * keymap.c — the one key table of the workbench (keymap.h).
 *
 * Every key runs a command string from the command table (the same commands
 * as the CLI and the ':' line); placeholders are filled from the selection
 * before running (mode_normal.c). Entries starting with '@' are input modes
 * of the terminal itself (the ':' prompt, search prompt, help and output
 * pagers, repaint), not features. The keys of the partition methods come
 * from their registry: a method's key runs 'partition --method NAME', with
 * --start for a stepped one.
 */
#include "keymap.h"

#include <curses.h>
#include <string.h>

#include "partition/methods/method_registry.h"

#define CTRL(c) ((c)&0x1f)

static const tui_binding KEYS[] = {
    {':', "@command"},
    {'/', "@search"},
    {'?', "@help"},
    {'o', "@output"},
    {CTRL('l'), "@refresh"},
    {27, "@cancel"},
    {CTRL('c'), "@interrupt"},
    {CTRL('z'), "@suspend"},
    {'q', "@quit"},
    {KEY_LEFT, "view pan -8 0"},
    {'h', "view pan -8 0"},
    {KEY_RIGHT, "view pan 8 0"},
    {'l', "view pan 8 0"},
    {KEY_UP, "view pan 0 -4"},
    {'k', "view pan 0 -4"},
    {KEY_DOWN, "view pan 0 4"},
    {'j', "view pan 0 4"},
    {'+', "view zoom +"},
    {'-', "view zoom -"},
    {'f', "view fit"},
    {'z', "view center"},
    {'F', "view follow toggle"},
    {'.', "view select next"},
    {',', "view select prev"},
    {'J', "view select succ"},
    {'K', "view select pred"},
    {'\n', "view expand %r"},
    {KEY_BACKSPACE, "view collapse %b"},
    {'c', "view color cycle"},
    {'L', "view dir toggle"},
    {'C', "view set constants=%C"},
    {'M', "view mouse toggle"},
    {'n', "find"},
    {'N', "find --prev"},
    {'>', "boundary %g 1"},
    {'<', "boundary %g -1"},
    {'{', "boundary %p 1"},
    {'}', "boundary %p -1"},
    {'m', "merge %g"},
    {'v', "split %g"},
    {'u', "undo"},
    {CTRL('r'), "redo"},
    {'e', "evaluate"},
    {0, "@methods"}, /* the partition methods' keys, from their registry */
    {'s', "step"},
    {'S', "step -n 10"},
    {'T', "repeat 100 step"},
    {'p', "plan"},
    {'x', "export -o partbench.svg"},
    {'W', "save partbench-session.json"},
    {'H', "view chip toggle"},
    {'[', "@spec-prev"},
    {']', "@spec-next"},
    {'=', "@spec-pin"},
};

size_t tui_keymap_build(const tui_binding *base, size_t n_base,
                        const pb_part_method *const *methods, int n_methods, tui_binding *out,
                        char (*cmds)[80], size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < n_base && n < max; i++) {
		if (strcmp(base[i].cmd, "@methods") != 0) {
			out[n++] = base[i];
			continue;
		}
		for (int k = 0; k < n_methods && k < TUI_METHODS_MAX && n < max; k++) {
			const pb_part_method *m = methods[k];
			if (!m->key)
				continue;
			snprintf(cmds[k], sizeof cmds[k], "partition --method %s%s", m->name,
			         (m->flags & PB_PART_M_STEPPED) ? " --start" : "");
			out[n].key = m->key;
			out[n++].cmd = cmds[k];
		}
	}
	return n;
}

const tui_binding *tui_keymap(size_t *n)
{
	static tui_binding all[TUI_KEYS_MAX];
	static char cmds[TUI_METHODS_MAX][80];
	static size_t n_all;
	static int built;
	if (!built) {
		const pb_part_method *methods[TUI_METHODS_MAX];
		int n_m = 0;
		for (; n_m < pb_part_method_count() && n_m < TUI_METHODS_MAX; n_m++)
			methods[n_m] = pb_part_method_at(n_m);
		n_all = tui_keymap_build(KEYS, sizeof KEYS / sizeof KEYS[0], methods, n_m, all,
		                         cmds, TUI_KEYS_MAX);
		built = 1;
	}
	*n = n_all;
	return all;
}

int tui_keymap_clashes(const tui_binding *keys, size_t n, FILE *out)
{
	int clashes = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++) {
			if (keys[i].key != keys[j].key)
				continue;
			char kb[16];
			if (out)
				fprintf(out, "key %s runs '%s' and '%s' (the first wins)\n",
				        tui_key_label(keys[i].key, kb, sizeof kb), keys[j].cmd,
				        keys[i].cmd);
			clashes++;
			break;
		}
	return clashes;
}

const char *tui_key_label(int key, char *buf, size_t len)
{
	switch (key) {
	case '\n':
		return "Enter";
	case ' ':
		return "Space";
	case KEY_BACKSPACE:
		return "Backspace";
	case KEY_LEFT:
		return "Left";
	case KEY_RIGHT:
		return "Right";
	case KEY_UP:
		return "Up";
	case KEY_DOWN:
		return "Down";
	case 27:
		return "Esc";
	default:
		break;
	}
	if (key < 32)
		snprintf(buf, len, "Ctrl-%c", key + 64);
	else
		snprintf(buf, len, "%c", key);
	return buf;
}
