/*
 * keymap.h — the workbench's key table: each key runs a command string (or
 * an '@' input mode of the terminal). The partition methods' keys come from
 * their registry (method_registry.h) and are checked against the rest: a
 * method whose key is already bound is a clash (tui_keymap_clashes).
 */
#ifndef PB_TUI_KEYMAP_H
#define PB_TUI_KEYMAP_H

#include <stddef.h>
#include <stdio.h>

#include "partition/methods/method.h"

typedef struct tui_binding {
	int key;         /* a character or a curses KEY_* code */
	const char *cmd; /* a command line, "@ACTION", or "@methods" (table only) */
} tui_binding;

#define TUI_KEYS_MAX 96
#define TUI_METHODS_MAX 32

/* The key table with "@methods" replaced by a binding per method of the
 * registry that has a key; built once. */
const tui_binding *tui_keymap(size_t *n);

/* The same for a given table and given methods (for tests): writes at most
 * max bindings to out, the commands of the methods into cmds; returns the
 * count. */
size_t tui_keymap_build(const tui_binding *base, size_t n_base,
                        const pb_part_method *const *methods, int n_methods, tui_binding *out,
                        char (*cmds)[80], size_t max);

/* Counts keys bound more than once in keys[0..n) and writes one line per
 * clash to out (may be NULL): the key and both commands. A clash makes the
 * later binding unreachable (the first one wins). */
int tui_keymap_clashes(const tui_binding *keys, size_t n, FILE *out);

/* The name of a key for help and messages ("Enter", "Ctrl-R", "x"). */
const char *tui_key_label(int key, char *buf, size_t len);

#endif
