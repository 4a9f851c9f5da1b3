/*
 * test_tui_keymap.c — the workbench's key table (tui/keymap.c): the partition
 * methods' keys, generated from their registry, clash with no other key
 * (a method registering a key that is already bound fails here), and every
 * method with a key is reachable by it.
 */
#include "pb_test.h"

#include "keymap.h"
#include "partition/methods/method_registry.h"

static void no_key_bound_twice(void **state)
{
	(void)state;
	size_t n;
	const tui_binding *keys = tui_keymap(&n);
	assert_true(n > 40);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int clashes = tui_keymap_clashes(keys, n, f);
	fclose(f);
	if (clashes)
		print_message("%s", text);
	free(text);
	assert_int_equal(clashes, 0);
}

/* Each method with a key in its registry entry runs it by that key. */
static void every_method_key_runs_its_method(void **state)
{
	(void)state;
	size_t n;
	const tui_binding *keys = tui_keymap(&n);
	int with_key = 0;
	for (int i = 0; i < pb_part_method_count(); i++) {
		const pb_part_method *m = pb_part_method_at(i);
		if (!m->key)
			continue;
		with_key++;
		char want[80];
		snprintf(want, sizeof want, "partition --method %s", m->name);
		const tui_binding *first = NULL;
		for (size_t k = 0; k < n && !first; k++)
			if (keys[k].key == m->key)
				first = &keys[k];
		assert_non_null(first);
		assert_memory_equal(first->cmd, want, strlen(want));
	}
	assert_true(with_key >= 5);
}

/* A made-up method whose key is 'u' (undo), another on the same key as the
 * first: both are reported, naming the key and the two commands. */
static void clash_is_found(void **state)
{
	(void)state;
	size_t n;
	const tui_binding *real = tui_keymap(&n);
	tui_binding base[TUI_KEYS_MAX + 1];
	memcpy(base, real, n * sizeof *real);
	base[n] = (tui_binding){0, "@methods"};
	static const pb_part_method undoer = {.name = "undoer", .key = 'u'};
	static const pb_part_method twin = {.name = "twin", .key = 'Y'};
	static const pb_part_method twin2 = {.name = "twin2", .key = 'Y'};
	const pb_part_method *const methods[] = {&undoer, &twin, &twin2};
	tui_binding out[TUI_KEYS_MAX + 4];
	char cmds[TUI_METHODS_MAX][80];
	size_t m = tui_keymap_build(base, n + 1, methods, 3, out, cmds, TUI_KEYS_MAX + 4);
	assert_int_equal(m, n + 3);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_int_equal(tui_keymap_clashes(out, m, f), 2);
	fclose(f);
	assert_non_null(strstr(text, "key u runs 'undo' and 'partition --method undoer'"));
	assert_non_null(strstr(text, "key Y runs 'partition --method twin' and 'partition "
	                             "--method twin2'"));
	free(text);
	/* without them the table is clean */
	assert_int_equal(tui_keymap_clashes(out, n, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(no_key_bound_twice),
	    cmocka_unit_test(every_method_key_runs_its_method),
	    cmocka_unit_test(clash_is_found),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
