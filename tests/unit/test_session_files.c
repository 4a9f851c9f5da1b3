/*
 * test_session_files.c — no lost work (issue 17.3, 17.4): a session saved in
 * one directory loads from another (absolute paths) and a hand-written
 * session names its model and layout relative to its own folder; the dirty
 * flag follows edits, saves and loads; w / wq / q / q! behave like vim's;
 * undo and redo name the change and say when the plan goes away.
 */
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pb_test.h"

/* A fresh folder under /tmp; the caller removes it with rm_tree. */
static void make_dir(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/pb_sessfiles.XXXXXX");
	assert_non_null(mkdtemp(dir));
}

static void rm_tree(const char *dir)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static char *run(pb_session *s, const char *line, int want_rc)
{
	int rc;
	char *out = pb_test_run_cmd(s, line, &rc);
	if (rc != want_rc)
		fprintf(stderr, "%s -> %d: %s\n", line, rc, out);
	assert_int_equal(rc, want_rc);
	return out;
}

static void saved_in_one_dir_loads_from_another(void **state)
{
	(void)state;
	char root[PATH_MAX], dir[PATH_MAX], other[PATH_MAX], file[PATH_MAX + 32];
	assert_non_null(getcwd(root, sizeof root));
	make_dir(dir, sizeof dir);
	make_dir(other, sizeof other);
	pb_session *s = pb_session_new();
	/* relative paths, as typed in the repository root */
	free(run(s, "open models/resnet18.onnx", PB_OK));
	free(run(s, "layout layouts/manycore-16.lua", PB_OK));
	free(run(s, "partition --method exact", PB_OK));
	assert_true(s->dirty);
	snprintf(file, sizeof file, "%s/s.json", dir);
	char line[PATH_MAX + 64];
	snprintf(line, sizeof line, "save %s", file);
	free(run(s, line, PB_OK));
	assert_false(s->dirty);
	assert_string_equal(s->session_path, file);
	int groups = s->plan->n_groups;
	pb_session_free(s);

	/* from another working directory, the relative names would not resolve */
	assert_int_equal(chdir(other), 0);
	pb_session *t = pb_session_new();
	snprintf(line, sizeof line, "load %s", file);
	free(run(t, line, PB_OK));
	assert_non_null(t->graph);
	assert_non_null(t->hw);
	assert_non_null(t->plan);
	assert_int_equal(t->plan->n_groups, groups);
	assert_false(t->dirty);
	pb_session_free(t);
	assert_int_equal(chdir(root), 0);
	rm_tree(dir);
	rm_tree(other);
}

static void relative_to_the_session_file(void **state)
{
	(void)state;
	char root[PATH_MAX], dir[PATH_MAX], file[PATH_MAX + 32], cmd[3 * PATH_MAX];
	assert_non_null(getcwd(root, sizeof root));
	make_dir(dir, sizeof dir);
	/* a project folder: dir/models, dir/layouts, dir/sessions/s.json naming
	 * ../models/... and ../layouts/... */
	snprintf(cmd, sizeof cmd,
	         "mkdir -p '%s/models' '%s/layouts' '%s/sessions' && cp models/resnet18.onnx "
	         "'%s/models/' && cp layouts/manycore-16.lua '%s/layouts/'",
	         dir, dir, dir, dir, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(file, sizeof file, "%s/sessions/s.json", dir);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fprintf(f, "{\"format\": \"partbench-session\", \"version\": 1, "
	           "\"model\": \"../models/resnet18.onnx\", \"inputs\": [], "
	           "\"layout\": \"../layouts/manycore-16.lua\", \"plan\": null, \"view\": \"\"}\n");
	fclose(f);
	/* loaded from the repository root: ../models is not the repository's */
	pb_session *s = pb_session_new();
	char line[PATH_MAX + 64];
	snprintf(line, sizeof line, "load %s", file);
	free(run(s, line, PB_OK));
	assert_non_null(s->graph);
	assert_non_null(strstr(s->model_path, "/sessions/../models/resnet18.onnx"));
	assert_non_null(s->hw);
	pb_session_free(s);
	/* a missing model names the session file and the path it tried */
	snprintf(cmd, sizeof cmd, "rm '%s/models/resnet18.onnx'", dir);
	assert_int_equal(system(cmd), 0);
	s = pb_session_new();
	char *out = run(s, line, PB_EINPUT);
	assert_non_null(strstr(out, "s.json"));
	assert_non_null(strstr(out, "resnet18.onnx"));
	free(out);
	pb_session_free(s);
	rm_tree(dir);
}

static void vim_commands_and_dirty(void **state)
{
	(void)state;
	char dir[PATH_MAX], line[PATH_MAX + 64];
	make_dir(dir, sizeof dir);
	pb_session *s = pb_session_new();
	free(run(s, "open models/resnet18.onnx", PB_OK));
	assert_false(s->dirty); /* opening is not a change */
	free(run(s, "layout layouts/manycore-16.lua", PB_OK));
	assert_true(s->dirty);
	char *out = run(s, "q", PB_EUSAGE);
	assert_non_null(strstr(out, "unsaved changes"));
	free(out);
	pb_cmd_ctx ctx = {s, stdout, stderr, 0, 0, NULL, NULL};
	pb_error err = {0};
	assert_int_equal(pb_cmd_run_line(&ctx, "q!", &err), PB_OK);
	assert_true(ctx.redraw & PB_QUIT);
	snprintf(line, sizeof line, "w %s/a.json", dir);
	free(run(s, line, PB_OK));
	assert_false(s->dirty);
	free(run(s, "partition --method greedy", PB_OK));
	assert_true(s->dirty);
	/* w without a file writes the session's own file */
	out = run(s, "w", PB_OK);
	assert_non_null(strstr(out, "/a.json"));
	free(out);
	assert_false(s->dirty);
	ctx.redraw = 0;
	assert_int_equal(pb_cmd_run_line(&ctx, "q", &err), PB_OK);
	assert_true(ctx.redraw & PB_QUIT);
	free(run(s, "partition --method exact", PB_OK));
	ctx.redraw = 0;
	snprintf(line, sizeof line, "wq %s/b.json", dir);
	assert_int_equal(pb_cmd_run_line(&ctx, line, &err), PB_OK);
	assert_true(ctx.redraw & PB_QUIT);
	assert_false(s->dirty);
	assert_string_equal(strrchr(s->session_path, '/'), "/b.json");
	pb_session_free(s);
	rm_tree(dir);
}

static void undo_names_the_change(void **state)
{
	(void)state;
	pb_session *s = pb_session_new();
	free(run(s, "open models/resnet18.onnx", PB_OK));
	free(run(s, "layout layouts/manycore-16.lua", PB_OK));
	free(run(s, "partition --method exact", PB_OK));
	free(run(s, "partition --method pack", PB_OK));
	char *out = run(s, "undo", PB_OK);
	assert_non_null(strstr(out, "undo: partition/pack ("));
	assert_non_null(strstr(out, "-> partition/exact ("));
	free(out);
	out = run(s, "redo", PB_OK);
	assert_non_null(strstr(out, "redo: partition/exact ("));
	assert_non_null(strstr(out, "-> partition/pack ("));
	free(out);
	free(run(s, "undo", PB_OK));
	/* the second undo goes back to no plan: it says so */
	out = run(s, "undo", PB_OK);
	assert_non_null(strstr(out, "-> no plan: the plan is removed ('redo' brings it back)"));
	free(out);
	assert_null(s->plan);
	out = run(s, "undo", PB_EUSAGE);
	assert_non_null(strstr(out, "nothing to undo"));
	free(out);
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(saved_in_one_dir_loads_from_another),
	    cmocka_unit_test(relative_to_the_session_file),
	    cmocka_unit_test(vim_commands_and_dirty),
	    cmocka_unit_test(undo_names_the_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
