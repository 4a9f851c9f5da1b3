/*
 * test_svg_export.c — the annotated SVG export: well-formed XML (xmllint),
 * one cluster per group plus the legend, labels, byte labels on edges that
 * cross groups, the title block, per-node <title> details, collapse of big
 * graphs, errors, the `export` command, Graphviz messages kept off the
 * terminal, and a golden file for a small graph (tests/golden/).
 * PB_UPDATE_GOLDEN=1 rewrites the golden file.
 */
#include "pb_test.h"
#include "load.h"

#include <fcntl.h>
#include <unistd.h>

#include <cgraph.h>

#include "commands.h"
#include "render/collapse.h"
#include "render/gv.h"
#include "render/svg_export.h"
#include "test_svg_xml.h"

#define GOLDEN "tests/golden/export_tiny.svg"

typedef struct {
	const char *name, *op, *in0, *in1;
	int64_t c, h; /* output 1 x c x h x h (h = 0: 1 x c) */
	double macs, params;
} spec;

/* A small residual net with module-path names, like PyTorch's ONNX export. */
static const spec tiny[] = {
    {"/stem/conv/Conv", "Conv", "x", NULL, 16, 32, 442368, 432},
    {"/stem/relu/Relu", "Relu", "/stem/conv/Conv", NULL, 16, 32, 0, 0},
    {"/blk1/conv1/Conv", "Conv", "/stem/relu/Relu", NULL, 16, 32, 2359296, 2304},
    {"/blk1/relu/Relu", "Relu", "/blk1/conv1/Conv", NULL, 16, 32, 0, 0},
    {"/blk1/conv2/Conv", "Conv", "/blk1/relu/Relu", NULL, 16, 32, 2359296, 2304},
    {"/blk1/Add", "Add", "/blk1/conv2/Conv", "/stem/relu/Relu", 16, 32, 0, 0},
    {"/head/pool/GlobalAveragePool", "GlobalAveragePool", "/blk1/Add", NULL, 16, 1, 0, 0},
    {"/head/fc/Gemm", "Gemm", "/head/pool/GlobalAveragePool", NULL, 10, 0, 160, 170},
};
#define N_TINY 8

static pb_graph *build(const spec *s, int n)
{
	pb_builder *b = pb_builder_new("tests/tiny.onnx", "test");
	int x = pb_builder_tensor(b, "x");
	pb_builder_input(b, x);
	int64_t xd[4] = {1, 3, 32, 32};
	pb_builder_set_shape(b, x, PB_DT_FLOAT, 4, xd, NULL);
	for (int i = 0; i < n; i++) {
		const char *ins[2] = {s[i].in0, s[i].in1};
		const char *outs[1] = {s[i].name};
		int id = pb_builder_node(b, s[i].name, s[i].op, "", ins, s[i].in1 ? 2 : 1, outs, 1);
		int t = pb_builder_tensor(b, s[i].name);
		int64_t d[4] = {1, s[i].c, s[i].h, s[i].h};
		pb_builder_set_shape(b, t, PB_DT_FLOAT, s[i].h ? 4 : 2, d, NULL);
		double numel = (double)s[i].c * (s[i].h ? s[i].h * s[i].h : 1);
		pb_cost c = {s[i].macs, 2 * s[i].macs, s[i].params, 4 * s[i].params, 4 * numel, 0};
		pb_builder_node_cost(b, id, &c);
	}
	pb_builder_output(b, pb_builder_tensor(b, s[n - 1].name));
	pb_graph *g = NULL;
	pb_error err = {0};
	pb_load_opts o = {.skip_shapes = 1};
	if (pb_graph_build(b, &o, &g, &err) != PB_OK)
		fprintf(stderr, "build: %s\n", err.msg);
	return g;
}

static pb_plan *tiny_plan(const pb_graph *g)
{
	pb_plan *p = pb_plan_new("partition", "exact", g->n_nodes);
	static const char *labels[3] = {"cores 0-3", "cores 4-9", "cores 10-15"};
	static const int first[3] = {0, 2, 6}, last[3] = {1, 5, 7};
	for (int k = 0; k < 3; k++) {
		pb_plan_group gr = {.label = (char *)labels[k],
		                    .first_unit = k * 4,
		                    .n_units = 4,
		                    .time = 1e-4 * (k + 1),
		                    .compute = 0.8e-4 * (k + 1),
		                    .routing = 0.2e-4 * (k + 1),
		                    .storage = 1e5 * (k + 1),
		                    .first_node = first[k],
		                    .last_node = last[k]};
		gr.bottleneck = k == 2;
		gr.over_memory = k == 2;
		pb_plan_add_group(p, &gr);
		for (int i = first[k]; i <= last[k]; i++)
			p->group[i] = k;
	}
	pb_plan_set_metric(p, "max_time", 3e-4);
	pb_plan_set_metric(p, "optimum", 2.5e-4);
	pb_plan_set_metric(p, "reward", -3.0);
	return p;
}

static char *export_tmp(const pb_graph *g, const pb_plan *p, const pb_svg_opts *o, const char *path,
                        pb_svg_stats *st)
{
	char *svg = NULL;
	size_t len = 0;
	pb_error err = {0};
	int rc = pb_svg_export_data(g, p, NULL, o, &svg, &len, st, &err);
	if (rc)
		fprintf(stderr, "export: %s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	assert_int_equal(strlen(svg), len);
	spit(path, svg, len);
	return svg;
}

#define CLUSTERS "count(//*[local-name()='g'][@class='cluster'])"
#define NODES "count(//*[local-name()='g'][@class='node'])"
#define EDGES "count(//*[local-name()='g'][@class='edge'])"

static void test_export_plan(void **state)
{
	pb_graph *g = build(tiny, N_TINY);
	assert_non_null(g);
	pb_plan *p = tiny_plan(g);
	pb_svg_opts o = {.title = "tiny-net"};
	pb_svg_stats st;
	const char *path = "build-test-svg-plan.svg";
	char *svg = export_tmp(g, p, &o, path, &st);
	assert_int_equal(xml_wellformed(path), 0);
	/* 3 group clusters + the legend cluster; 8 nodes + the legend node. */
	assert_int_equal((int)xml_xpath_num(path, CLUSTERS), 4);
	assert_int_equal((int)xml_xpath_num(path, NODES), 9);
	/* 8 distinct node pairs with an edge (Add has two inputs). */
	assert_int_equal((int)xml_xpath_num(path, EDGES), 8);
	assert_int_equal(st.n_clusters, 3);
	assert_int_equal(st.n_boxes, 8);
	assert_int_equal(st.depth, PB_COLLAPSE_NONE);
	/* Cross-group edges: relu->conv1, relu->Add (group 0 -> 1), Add->pool (1 -> 2). */
	assert_int_equal(st.n_cross_edges, 3);
	/* Edge byte labels are the 1x16x32x32 float tensor: 65536 B. */
	assert_int_equal((int)xml_xpath_num(path, "count(//*[local-name()='g'][@class='edge']"
	                                          "/*[local-name()='text'][text()='65.5 KB'])"),
	                 3);
	/* Group labels, bottleneck and over-memory markers, legend, title block. */
	assert_non_null(strstr(svg, "cores 0&#45;3"));
	assert_non_null(strstr(svg, "BOTTLENECK"));
	assert_non_null(strstr(svg, "OVER MEMORY"));
	assert_non_null(strstr(svg, ">legend<"));
	assert_non_null(strstr(svg, ">tiny&#45;net<"));
	assert_non_null(strstr(svg, "max(t) = 300 us"));
	assert_non_null(strstr(svg, "reward = &#45;3"));
	assert_non_null(strstr(svg, "gap to optimum = 20.00%"));
	/* Node labels: op, short name, shape, MACs. */
	assert_non_null(strstr(svg, ">blk1/conv1<"));
	assert_non_null(strstr(svg, ">1x16x32x32<"));
	assert_non_null(strstr(svg, ">2.36 M MACs<"));
	/* Full details in each node's <title>. */
	assert_non_null(
	    strstr(svg, "<title>/blk1/conv2/Conv\nop: Conv (node 4)\ngroup: cores 4-9"));
	assert_non_null(strstr(svg, "xlink:title=\"/blk1/conv2/Conv"));
	assert_null(strstr(svg, "<!--"));
	assert_null(strstr(svg, "<title>b3</title>"));
	free(svg);
	unlink(path);
	pb_plan_free(p);
	pb_graph_free(g);
}

/* The title block writes every metric with its unit: seconds for times and
 * bounds, bytes for storage and memory (decimal, util/fmt.h), inputs per
 * second, the bubble in percent; counts as they are. */
static void test_title_units(void **state)
{
	pb_graph *g = build(tiny, N_TINY);
	pb_plan *p = tiny_plan(g);
	pb_plan_set_metric(p, "lower_bound", 2.4e-4);
	pb_plan_set_metric(p, "max_storage", 3.12e7);
	pb_plan_set_metric(p, "memory", 134217728);
	pb_plan_set_metric(p, "throughput_serial", 904.2);
	pb_plan_set_metric(p, "bubble", 0.25);
	pb_plan_set_metric(p, "cores", 16);
	pb_plan_set_metric(p, "objective", 3e-4); /* max(t), a time (was "0.0003") */
	pb_svg_opts o = {.title = "tiny-net"};
	const char *path = "build-test-svg-units.svg";
	char *svg = export_tmp(g, p, &o, path, NULL);
	assert_int_equal(xml_wellformed(path), 0);
	static const char *want[] = {"lower_bound = 240 us", "max_storage = 31.2 MB",
	                             "memory = 134 MB",      "throughput_serial = 904/s",
	                             "bubble = 25.0%",       "cores = 16",
	                             "objective = 300 us"};
	for (int i = 0; i < 7; i++) {
		char line[64]; /* in the block and in its tooltip */
		assert_non_null(strstr(svg, want[i]));
		snprintf(line, sizeof line, "\n%s", want[i]);
		assert_non_null(strstr(svg, line));
	}
	assert_null(strstr(svg, "e+0"));
	free(svg);
	/* the weighted reward: objective and optimum are scores, not times */
	json_object_set_new(p->detail, "reward_mode", json_string("weighted"));
	pb_plan_set_metric(p, "objective", 0.75);
	pb_plan_set_metric(p, "optimum", 0.5);
	svg = export_tmp(g, p, &o, path, NULL);
	assert_non_null(strstr(svg, "objective = 0.75"));
	assert_non_null(strstr(svg, "optimum = 0.5"));
	assert_null(strstr(svg, "optimum = 500"));
	free(svg);
	unlink(path);
	pb_plan_free(p);
	pb_graph_free(g);
}

/* An interleaved pipeline (2 stages, 2 chunks each: 4 groups labelled
 * "stage S chunk K"): the title block says 2 stages in 4 chunks, not "4
 * stages"; every metric is written (those after the 6th were dropped: pp,
 * memory_per_device of a dtp plan); a cluster's tooltip starts with its label,
 * not "stage 2: stage 0 chunk 1"; without a layout, the hardware line names
 * the plan's. */
static void test_title_interleaved(void **state)
{
	pb_graph *g = build(tiny, N_TINY);
	pb_plan *p = pb_plan_new("pipeline", "dtp", g->n_nodes);
	static const char *labels[4] = {"stage 0 chunk 0", "stage 1 chunk 0", "stage 0 chunk 1",
	                                "stage 1 chunk 1"};
	for (int k = 0; k < 4; k++) {
		pb_plan_group gr = {.label = (char *)labels[k],
		                    .first_unit = (k % 2) * 8,
		                    .n_units = 8,
		                    .time = 1e-3,
		                    .first_node = 2 * k,
		                    .last_node = 2 * k + 1};
		pb_plan_add_group(p, &gr);
		p->group[2 * k] = p->group[2 * k + 1] = k;
	}
	static const char *names[] = {
	    "step_time", "microbatches",      "bubble",           "stages", "feasible", "dp", "tp",
	    "pp",        "chunks_per_device", "memory_per_device"};
	static const double vals[] = {4.1e-2, 2, 0.11, 2, 1, 8, 1, 2, 2, 1.27e10};
	for (int i = 0; i < 10; i++)
		pb_plan_set_metric(p, names[i], vals[i]);
	json_object_set_new(p->detail, "layout", json_string("cluster-2x8"));
	pb_svg_opts o = {.title = "pipe"};
	const char *path = "build-test-svg-interleaved.svg";
	char *svg = export_tmp(g, p, &o, path, NULL);
	assert_int_equal(xml_wellformed(path), 0);
	/* no layout given (export --plan alone): the one the plan names, not "none" */
	assert_non_null(strstr(svg, "2x8 (named by the plan)"));
	assert_null(strstr(svg, "hardware: none"));
	assert_non_null(strstr(svg, "2 stages in 4 chunks"));
	assert_null(strstr(svg, "4 stages"));
	assert_non_null(strstr(svg, "pp = 2"));
	assert_non_null(strstr(svg, "chunks_per_device = 2"));
	assert_non_null(strstr(svg, "memory_per_device = 12.7 GB"));
	assert_non_null(strstr(svg, "\nmemory_per_device = 12.7 GB")); /* the tooltip too */
	assert_non_null(strstr(svg, "<title>stage 0 chunk 1\n"));
	assert_null(strstr(svg, "stage 2: stage 0 chunk 1"));
	free(svg);
	unlink(path);
	pb_plan_free(p);
	pb_graph_free(g);
}

static void test_export_no_plan_macs(void **state)
{
	pb_graph *g = build(tiny, N_TINY);
	pb_svg_opts o = {.title = "tiny-net", .rankdir_lr = 1};
	pb_svg_stats st;
	const char *path = "build-test-svg-macs.svg";
	char *svg = export_tmp(g, NULL, &o, path, &st);
	assert_int_equal(xml_wellformed(path), 0);
	assert_int_equal((int)xml_xpath_num(path, CLUSTERS), 1); /* legend only */
	assert_int_equal(st.n_cross_edges, 0);
	assert_non_null(strstr(svg, "node fill: MACs"));
	assert_non_null(strstr(svg, "plan: none"));
	/* The heaviest node gets the darkest heat colour (#b10026). */
	assert_non_null(strstr(svg, "fill=\"#b10026\""));
	free(svg);
	unlink(path);
	pb_graph_free(g);
}

/* A 6-stage x 4-block x 5-op graph: collapse by module path. */
static pb_graph *blocks_graph(void)
{
	pb_builder *b = pb_builder_new("blocks", "test");
	int x = pb_builder_tensor(b, "x");
	pb_builder_input(b, x);
	char prev[96] = "x", name[96];
	for (int s = 0; s < 6; s++)
		for (int k = 0; k < 4; k++)
			for (int o = 0; o < 5; o++) {
				snprintf(name, sizeof name, "/features/stage%d/block%d/Op_%d", s, k,
				         o);
				const char *ins[1] = {prev};
				const char *outs[1] = {name};
				int id = pb_builder_node(b, name, o == 2 ? "MatMul" : "Add", "",
				                         ins, 1, outs, 1);
				pb_cost c = {o == 2 ? 1000.0 : 0, NAN, 0, 0, 64, 0};
				pb_builder_node_cost(b, id, &c);
				snprintf(prev, sizeof prev, "%s", name);
			}
	pb_graph *g = NULL;
	pb_error err = {0};
	pb_load_opts lo = {.skip_shapes = 1};
	assert_int_equal(pb_graph_build(b, &lo, &g, &err), PB_OK);
	return g;
}

static void test_collapse(void **state)
{
	pb_graph *g = blocks_graph();
	assert_int_equal(g->n_nodes, 120);
	int *group = malloc(120 * sizeof *group);
	for (int i = 0; i < 120; i++)
		group[i] = i < 52 ? 0 : 1; /* the boundary splits stage2/block2 */
	pb_collapse *c;
	pb_error err = {0};
	/* Budget 30: depth 3 (blocks) gives 24 + 1 split = 25 boxes; depth 4 would
	 * be per node (120). */
	assert_int_equal(pb_collapse_compute(g, group, 30, 0, &c, &err), PB_OK);
	assert_int_equal(c->depth, 3);
	assert_int_equal(c->n_boxes, 25);
	for (int b = 0; b < c->n_boxes; b++) {
		for (int i = c->start[b]; i < c->start[b + 1]; i++) {
			assert_int_equal(c->box_of[i], b);
			assert_int_equal(group[i], group[c->start[b]]); /* one group per box */
		}
	}
	char pre[128];
	assert_string_equal(pb_collapse_prefix(g, c, 0, pre, sizeof pre), "features/stage0/block0");
	/* Expanding box 1 gives 5 single-node boxes. */
	assert_int_equal(pb_collapse_expand(c, 1, &err), PB_OK);
	assert_int_equal(c->n_boxes, 29);
	assert_int_equal(pb_collapse_size(c, 1), 1);
	assert_int_equal(c->box_of[9], 5);
	assert_int_equal(pb_collapse_expand(c, 99, &err), PB_EUSAGE);
	pb_collapse_free(c);
	/* Budget 10: depth 2 (stages: 6 + 1 split) fits, depth 3 does not. */
	assert_int_equal(pb_collapse_compute(g, group, 10, 0, &c, &err), PB_OK);
	assert_int_equal(c->depth, 2);
	assert_int_equal(c->n_boxes, 7);
	pb_collapse_free(c);
	/* Budget 3: depth 1 ("features", shared by all) leaves the 2 group ranges. */
	assert_int_equal(pb_collapse_compute(g, group, 3, 0, &c, &err), PB_OK);
	assert_int_equal(c->depth, 1);
	assert_int_equal(c->n_boxes, 2);
	pb_collapse_free(c);
	/* Budget 1 cannot be met: depth 0 still keeps one box per group range. */
	assert_int_equal(pb_collapse_compute(g, group, 1, 0, &c, &err), PB_OK);
	assert_int_equal(c->depth, 0);
	assert_int_equal(c->n_boxes, 2);
	pb_collapse_free(c);
	/* Within budget: no collapse. */
	assert_int_equal(pb_collapse_compute(g, NULL, 500, 0, &c, &err), PB_OK);
	assert_int_equal(c->depth, PB_COLLAPSE_NONE);
	assert_int_equal(c->n_boxes, 120);
	pb_collapse_free(c);

	/* Export with collapsing: boxes carry their contents in the tooltip. */
	pb_plan *p = pb_plan_new("pipeline", "manual", 120);
	memcpy(p->group, group, 120 * sizeof *group);
	pb_svg_opts o = {.max_boxes = 30, .title = "blocks"};
	pb_svg_stats st;
	const char *path = "build-test-svg-collapse.svg";
	char *svg = export_tmp(g, p, &o, path, &st);
	assert_int_equal(xml_wellformed(path), 0);
	assert_int_equal(st.n_boxes, 25);
	assert_int_equal((int)xml_xpath_num(path, NODES), 26);
	assert_int_equal((int)xml_xpath_num(path, CLUSTERS), 3);
	assert_non_null(strstr(svg, "collapsed: 120 nodes drawn as 25 boxes"));
	assert_non_null(strstr(svg, "5 nodes collapsed (ids 0&#45;4)") ||
	                strstr(svg, "5 nodes collapsed (ids 0-4)"));
	assert_non_null(strstr(svg, "stage 1")); /* auto colour for a pipeline plan */
	free(svg);
	unlink(path);
	pb_plan_free(p);
	free(group);
	pb_graph_free(g);
}

static void test_errors(void **state)
{
	pb_graph *g = build(tiny, N_TINY);
	pb_plan *p = pb_plan_new("partition", "x", 5); /* wrong size */
	char *svg = NULL;
	size_t len;
	pb_error err = {0};
	assert_int_equal(pb_svg_export_data(g, p, NULL, NULL, &svg, &len, NULL, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "5 nodes but the model has 8"));
	assert_null(svg);
	pb_plan_free(p);
	p = pb_plan_new("partition", "x", N_TINY);
	p->group[3] = -7;
	assert_int_equal(pb_svg_export_data(g, p, NULL, NULL, &svg, &len, NULL, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "assignment[3]"));
	pb_plan_free(p);
	int c;
	assert_int_equal(pb_color_by_parse("stage", &c, &err), PB_OK);
	assert_int_equal(c, PB_COLOR_STAGE);
	assert_int_equal(pb_color_by_parse("rainbow", &c, &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "rainbow"));
	assert_int_equal(
	    pb_svg_export_file(g, NULL, NULL, NULL, "/nonexistent-dir/x.svg", NULL, &err),
	    PB_EINPUT);
	assert_non_null(strstr(err.msg, "/nonexistent-dir/x.svg"));
	pb_graph_free(g);
}

/* Names with markup characters, control characters and bytes that are not
 * UTF-8 (a corrupt or hostile model) still give well-formed XML: labels,
 * tooltips and the title block all go through the escapers. */
static void test_hostile_names(void **state)
{
	(void)state;
	static const spec bad[] = {
	    {"/a<b>&\"c'/conv\xff\xfe/Conv", "Conv", "x", NULL, 16, 32, 442368, 432},
	    {"/a<b>&\"c'/relu\x01\x1b[31m/Relu", "Relu", "/a<b>&\"c'/conv\xff\xfe/Conv", NULL, 16,
	     32, 0, 0},
	    {"/\xe2\x82/head\\n/Gemm", "Gemm", "/a<b>&\"c'/relu\x01\x1b[31m/Relu", NULL, 10, 0, 160,
	     170},
	};
	pb_graph *g = build(bad, 3);
	assert_non_null(g);
	const char *path = "build-test-svg-hostile.svg";
	for (int lr = 0; lr < 2; lr++) {
		pb_svg_opts o = {.rankdir_lr = lr, .title = "t<i>tle \xff"};
		pb_svg_stats st;
		char *svg = export_tmp(g, NULL, &o, path, &st);
		assert_int_equal(xml_wellformed(path), 0);
		assert_int_equal((int)xml_xpath_num(path, NODES), 3 + 1);
		assert_null(strstr(svg, "\xff"));
		free(svg);
	}
	unlink(path);
	pb_graph_free(g);
}

/* Graphviz's complaints go to pb_error, never to the terminal (stderr). */
static void test_graphviz_messages(void **state)
{
	pb_error err = {0};
	GVC_t *gvc = pb_gv_context(&err);
	assert_non_null(gvc);
	fflush(stderr);
	int saved = dup(2);
	char tmpl[] = "/tmp/pb-gv-stderr-XXXXXX";
	int fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	dup2(fd, 2);
	pb_gv_messages_clear();
	Agraph_t *G = agopen("t", Agdirected, NULL);
	agnode(G, "a", 1);
	int rc = gvLayout(gvc, G, "no-such-engine");
	agclose(G);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	assert_int_not_equal(rc, 0);
	assert_non_null(strstr(pb_gv_messages(), "no-such-engine"));
	assert_int_equal(pb_gv_fail(&err, "layout"), PB_EINTERNAL);
	assert_non_null(strstr(err.msg, "layout: Graphviz failed: "));
	assert_int_equal(lseek(fd, 0, SEEK_END), 0); /* nothing reached stderr */
	close(fd);
	unlink(tmpl);
}

static void test_export_command(void **state)
{
	pb_session *s = pb_session_new();
	pb_graph *g = build(tiny, N_TINY);
	pb_session_set_graph(s, g, "tests/tiny.onnx");
	pb_session_set_plan(s, tiny_plan(g));
	char *out = NULL;
	size_t olen = 0;
	FILE *of = open_memstream(&out, &olen);
	pb_cmd_ctx ctx = {.s = s, .out = of, .log = of};
	pb_error err = {0};
	const char *path = "build-test-svg-cmd.svg";
	int rc = pb_cmd_run_line(&ctx, "export -o build-test-svg-cmd.svg --color-by macs", &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	assert_int_equal(xml_wellformed(path), 0);
	assert_int_equal((int)xml_xpath_num(path, CLUSTERS), 4); /* plan clusters kept */
	char *svg = slurp(path, NULL);
	assert_non_null(strstr(svg, "node fill: MACs"));
	assert_non_null(strstr(svg, "group (cluster border)"));
	free(svg);
	/* A saved plan given with --plan. */
	assert_int_equal(pb_plan_save(s->plan, NULL, "build-test-svg-plan.json", &err), PB_OK);
	pb_session_set_plan(s, NULL);
	assert_int_equal(pb_cmd_run_line(&ctx,
	                                 "export --plan build-test-svg-plan.json -o "
	                                 "build-test-svg-cmd.svg --json",
	                                 &err),
	                 PB_OK);
	assert_int_equal((int)xml_xpath_num(path, CLUSTERS), 4);
	assert_int_equal(pb_cmd_run_line(&ctx, "export -o x.svg --rankdir XY", &err), PB_EUSAGE);
	assert_int_equal(pb_cmd_run_line(&ctx, "export", &err), PB_EUSAGE);
	assert_int_equal(pb_cmd_run_line(&ctx, "export --plan /nonexistent.json -o x.svg", &err),
	                 PB_EINPUT);
	assert_non_null(strstr(err.msg, "/nonexistent.json"));
	fclose(of);
	assert_non_null(strstr(out, "\"clusters\": 3"));
	free(out);
	unlink(path);
	unlink("build-test-svg-plan.json");
	pb_session_free(s);
}

/* Text of an XPath string expression (first line), or "" */
static char *xml_xpath_str(const char *path, const char *expr)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "xmllint --nonet --xpath \"%s\" '%s' 2>/dev/null", expr, path);
	FILE *p = popen(cmd, "r");
	char *buf = calloc(1, 1 << 16);
	if (p) {
		if (!fgets(buf, 1 << 16, p))
			buf[0] = '\0';
		pclose(p);
	}
	return buf;
}

/* Top (smallest y) of the k-th cluster (1-based, document order): its outline
 * is a path (rounded style) whose numbers are x,y pairs. */
static double cluster_top(const char *path, int k)
{
	char expr[256];
	snprintf(expr, sizeof expr,
	         "string((//*[local-name()='g'][@class='cluster'])[%d]/*[local-name()='path']/@d)",
	         k);
	char *d = xml_xpath_str(path, expr);
	double top = INFINITY;
	int idx = 0;
	for (char *p = d; *p;) {
		if ((*p >= '0' && *p <= '9') || *p == '-' || *p == '.') {
			char *e;
			double v = strtod(p, &e);
			if (idx++ % 2 == 1 && v < top)
				top = v;
			p = e;
		} else {
			p++;
		}
	}
	free(d);
	return top;
}

/* Real models: the clusters (core groups, in layer order) are stacked top
 * to bottom in that order, and nodes that hold only constants (the Identity
 * copies of weights that PyTorch's exporter adds) are left out unless asked
 * for. */
static void test_export_real_models(void **state)
{
	(void)state;
	static const char *models[] = {"models/resnet18.onnx", "models/swin_t.onnx"};
	for (int m = 0; m < 2; m++) {
		pb_session *s = pb_session_new();
		char *out = NULL;
		size_t olen = 0;
		FILE *of = open_memstream(&out, &olen);
		pb_cmd_ctx ctx = {.s = s, .out = of, .log = of};
		pb_error err = {0};
		char line[256];
		snprintf(line, sizeof line,
		         "partition %s --layout layouts/manycore-16.lua --method exact", models[m]);
		assert_int_equal(pb_cmd_run_line(&ctx, line, &err), PB_OK);
		int n_groups = s->plan->n_groups;
		assert_true(n_groups >= 4);
		const char *path = "build-test-svg-real.svg";
		assert_int_equal(pb_cmd_run_line(&ctx, "export -o build-test-svg-real.svg", &err),
		                 PB_OK);
		assert_int_equal(xml_wellformed(path), 0);
		assert_int_equal((int)xml_xpath_num(path, CLUSTERS), n_groups + 1); /* + legend */
		double prev = -INFINITY;
		for (int k = 1; k <= n_groups; k++) {
			double top = cluster_top(path, k);
			assert_true(isfinite(top));
			if (top <= prev)
				fprintf(stderr,
				        "%s: cluster %d starts at y=%g, above cluster %d (y=%g)\n",
				        models[m], k, top, k - 1, prev);
			assert_true(top > prev);
			prev = top;
		}
		char *svg = slurp(path, NULL);
		assert_non_null(strstr(svg, "not drawn: "));
		if (m == 0) {
			/* resnet18: 65 nodes, 16 of them Identity copies of weights. */
			assert_int_equal((int)xml_xpath_num(path, NODES), 65 - 16 + 1);
			assert_null(strstr(svg, "Identity_0"));
			free(svg);
			assert_int_equal(pb_cmd_run_line(&ctx,
			                                 "export -o build-test-svg-real.svg "
			                                 "--show-constants",
			                                 &err),
			                 PB_OK);
			svg = slurp(path, NULL);
			assert_int_equal((int)xml_xpath_num(path, NODES), 65 + 1);
			assert_non_null(strstr(svg, "Identity_0"));
		}
		free(svg);
		fclose(of);
		free(out);
		unlink(path);
		pb_session_free(s);
	}
}

static void test_golden(void **state)
{
	pb_graph *g = build(tiny, N_TINY);
	pb_plan *p = tiny_plan(g);
	pb_svg_opts o = {.title = "tiny-net"};
	char *svg = NULL;
	size_t len = 0;
	pb_error err = {0};
	assert_int_equal(pb_svg_export_data(g, p, NULL, &o, &svg, &len, NULL, &err), PB_OK);
	/* Same input, same bytes. */
	char *again = NULL;
	size_t len2 = 0;
	assert_int_equal(pb_svg_export_data(g, p, NULL, &o, &again, &len2, NULL, &err), PB_OK);
	assert_int_equal(len, len2);
	assert_memory_equal(svg, again, len);
	free(again);
	const char *upd = getenv("PB_UPDATE_GOLDEN");
	if (upd && *upd == '1') {
		spit(GOLDEN, svg, len);
	} else if (!pb_gv_deterministic()) {
		fprintf(stderr,
		        "golden: Graphviz plugins not found next to libgvc; text widths come "
		        "from pango, skipping the byte comparison\n");
	} else {
		size_t glen = 0;
		char *gold = slurp(GOLDEN, &glen);
		assert_non_null(gold);
		if (glen != len || memcmp(gold, svg, len) != 0) {
			spit("build-test-svg-golden.actual.svg", svg, len);
			fprintf(stderr,
			        "golden: %s differs from build-test-svg-golden.actual.svg "
			        "(PB_UPDATE_GOLDEN=1 to accept)\n",
			        GOLDEN);
		}
		assert_int_equal(glen, len);
		assert_memory_equal(gold, svg, len);
		free(gold);
	}
	free(svg);
	pb_plan_free(p);
	pb_graph_free(g);
}

static int teardown(void **state)
{
	pb_gv_shutdown();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_export_plan),       cmocka_unit_test(test_export_no_plan_macs),
	    cmocka_unit_test(test_collapse),          cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_graphviz_messages), cmocka_unit_test(test_export_command),
	    cmocka_unit_test(test_title_units),       cmocka_unit_test(test_golden),
	    cmocka_unit_test(test_hostile_names),     cmocka_unit_test(test_export_real_models),
	    cmocka_unit_test(test_title_interleaved),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
