/* test_svg_branch.c — `export --color-by branch` (issue 18.3): every
 * parallel branch group drawn as a cluster titled with its kind, the kinds
 * with their counts in the legend, the nodes `fuse` fuses marked with a
 * thick border; on a DOT test graph holding all six kinds and on googlenet,
 * checked with xmllint against the `fuse --json` report of the same graph;
 * a plan that is no branch plan refused with the reason. */
#include "pb_test.h"

#include <unistd.h>

#include "render/svg_export.h"
#include "test_svg_xml.h"

#define KINDS_DOT "tests/data/branch_kinds.dot"
#define GROUP_CLUSTERS                                                                             \
	"count(//*[local-name()='g'][@class='cluster']/*[local-name()='title']"                    \
	"[starts-with(., 'branch group ')])"
#define FUSED_BOXES                                                                                \
	"count(//*[local-name()='g'][@class='node']//*[local-name()='path' or "                    \
	"local-name()='polygon'][@stroke-width='2.5'])"

static const char *kind_names[] = {"parent_child", "parent", "child", "source", "sink", "local"};

/* Exports MODEL coloured by branch into path; returns the --json stats. */
static json_t *export_branch(pb_session *s, const char *model, const char *path)
{
	char line[512];
	snprintf(line, sizeof line, "export %s --color-by branch -o %s --json", model, path);
	return pb_test_run_json(s, line);
}

static json_t *fuse_report(pb_session *s, const char *model)
{
	char line[512];
	snprintf(line, sizeof line, "fuse %s --json", model);
	return pb_test_run_json(s, line);
}

static int count_in_file(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char *buf = NULL;
	size_t cap = 0;
	int n = 0;
	while (getline(&buf, &cap, f) > 0)
		for (const char *p = buf; (p = strstr(p, needle)) != NULL; p += strlen(needle))
			n++;
	free(buf);
	fclose(f);
	return n;
}

/* The SVG against the fusion report: one cluster per group, each kind in
 * the legend with its group count, a thick border per fused node. */
static void check_against_fuse(const char *model, const char *path, int expect_all_kinds)
{
	pb_session *s = pb_session_new();
	json_t *st = export_branch(s, model, path);
	json_t *fr = fuse_report(s, model);
	assert_int_equal(xml_wellformed(path), 0);
	json_t *groups = json_object_get(fr, "groups");
	int total = (int)json_integer_value(json_object_get(groups, "total"));
	assert_true(total > 0);
	assert_int_equal((int)json_integer_value(json_object_get(st, "clusters")), total);
	assert_int_equal((int)xml_xpath_num(path, GROUP_CLUSTERS), total);
	int fused = (int)json_integer_value(json_object_get(fr, "nodes_fused"));
	assert_true(fused > 0);
	assert_int_equal((int)json_integer_value(json_object_get(st, "fused_boxes")), fused);
	assert_int_equal((int)xml_xpath_num(path, FUSED_BOXES), fused);
	json_t *per = json_object_get(groups, "per_kind");
	for (int k = 0; k < 6; k++) {
		int n = (int)json_integer_value(json_object_get(per, kind_names[k]));
		char row[96], title[96];
		snprintf(row, sizeof row, ">%s: %d group%s,", kind_names[k], n, n == 1 ? "" : "s");
		if (count_in_file(path, row) != 1)
			fail_msg("%s: legend row '%s' missing", model, row);
		/* Each group's cluster title names its kind. */
		snprintf(title, sizeof title, ": %s #", kind_names[k]);
		assert_int_equal(count_in_file(path, title) > 0, n > 0);
		if (expect_all_kinds)
			assert_true(n >= 1);
	}
	assert_true(count_in_file(path, "thick black border: node fused") == 1);
	json_decref(st);
	json_decref(fr);
	pb_session_free(s);
}

static void test_all_kinds_dot(void **state)
{
	(void)state;
	char path[] = "/tmp/pb_svg_branch_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	check_against_fuse(KINDS_DOT, path, 1);
	unlink(path);
}

static void test_googlenet(void **state)
{
	(void)state;
	char path[] = "/tmp/pb_svg_branch_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	check_against_fuse("models/googlenet.onnx", path, 0);
	unlink(path);
}

static void test_lua_rule_changes_marks(void **state)
{
	(void)state;
	/* A Lua rule making Relu not fusable: the DOT graph (all Relu but the
	 * joins and the sources) keeps groups, but fewer nodes are marked
	 * fused: the marks follow the session's rules. */
	char path[] = "/tmp/pb_svg_branch_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	static char buf[1 << 16];
	pb_test_session t;
	pb_test_session_open(&t, buf, sizeof buf);
	pb_error err = {0};
	char line[256];
	snprintf(line, sizeof line, "export %s --color-by branch -o %s --json", KINDS_DOT, path);
	assert_int_equal(pb_test_session_cmd(&t, line, &err), PB_OK);
	json_t *before = json_loads(buf, 0, NULL);
	assert_non_null(before);
	assert_int_equal(pb_test_session_lua(&t,
	                                     "pb.rule{ name = 'no_relu', fusable = false, "
	                                     "match = function(op) return op.op == 'Relu' end }",
	                                     "no_relu.lua", &err),
	                 PB_OK);
	assert_int_equal(pb_test_session_cmd(&t, line, &err), PB_OK);
	json_t *after = json_loads(buf, 0, NULL);
	assert_non_null(after);
	assert_true(json_integer_value(json_object_get(after, "clusters")) > 0);
	int fb = (int)json_integer_value(json_object_get(before, "fused_boxes"));
	int fa = (int)json_integer_value(json_object_get(after, "fused_boxes"));
	assert_true(fa < fb);
	assert_int_equal((int)xml_xpath_num(path, FUSED_BOXES), fa);
	json_decref(before);
	json_decref(after);
	pb_test_session_close(&t);
	unlink(path);
}

static void test_refuses_other_plans(void **state)
{
	(void)state;
	pb_graph *g = pb_test_chain_graph(3, NULL, "0>1 1>2");
	pb_plan *p = pb_plan_new("partition", "manual", g->n_nodes);
	pb_svg_opts o = {0};
	o.color_by = PB_COLOR_BRANCH;
	char *svg = NULL;
	size_t len = 0;
	pb_error err = {0};
	assert_int_equal(pb_svg_export_data(g, p, NULL, &o, &svg, &len, NULL, &err), PB_EUSAGE);
	assert_null(svg);
	assert_non_null(strstr(err.msg, "branch plan"));
	assert_non_null(strstr(err.msg, "partition"));
	pb_plan_free(p);
	pb_graph_free(g);
	int c = -1;
	assert_int_equal(pb_color_by_parse("branch", &c, &err), PB_OK);
	assert_int_equal(c, PB_COLOR_BRANCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_all_kinds_dot),
	    cmocka_unit_test(test_googlenet),
	    cmocka_unit_test(test_lua_rule_changes_marks),
	    cmocka_unit_test(test_refuses_other_plans),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
