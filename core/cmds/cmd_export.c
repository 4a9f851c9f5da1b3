/*
 * cmds/cmd_export.c — the rendering commands: export (annotated SVG of the graph
 * and plan, core/render/svg_export.h) and plot (SVG charts of training logs,
 * tuning logs and plans, core/render/plot.h). docs/export.md documents both.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "cmds/branch_of.h"
#include "render/chip_svg.h"
#include "render/plot.h"
#include "render/svg_export.h"
#include "util/atomic_file.h"
#include "util/fmt.h"

static const pb_opt export_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_LAYOUT,
    PB_OPTS_JSON,
    {.name = "output",
     .short_name = 'o',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "where to write the SVG (required)",
     .path = "w"},
    {.name = "plan",
     .short_name = 'p',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "plan JSON to draw (default: the session's current plan, if any)",
     .path = "r:json"},
    {.name = "color-by",
     .short_name = 'c',
     .type = PB_OPT_STR,
     .metavar = "MODE",
     .help = "group|stage|backend|fusion|macs|branch (default: from the plan's kind; macs without "
             "a plan); branch outlines every parallel branch group (kinds in the legend) and marks "
             "the nodes `fuse` would fuse"},
    {.name = "rankdir",
     .type = PB_OPT_STR,
     .metavar = "TB|LR",
     .help = "TB (top to bottom, default) or LR (left to right)"},
    {.name = "collapse",
     .type = PB_OPT_STR,
     .metavar = "WHEN",
     .help = "auto (collapse above --max-boxes, default), never, always"},
    {.name = "max-boxes",
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "box budget when collapsing (default 250)"},
    {.name = "title",
     .short_name = 't',
     .type = PB_OPT_STR,
     .metavar = "TEXT",
     .help = "first line of the title block (default: model file)"},
    {.name = "chip",
     .type = PB_OPT_FLAG,
     .help = "the floorplan of a placed plan instead of the graph: cores coloured by group, link "
             "loads as heat, the I/O corner (routed mesh layouts; docs/mesh.md)"},
    {.name = "show-constants",
     .type = PB_OPT_FLAG,
     .help = "draw nodes that hold only constants (Constant, weight Identity copies; hidden by "
             "default)"},
    PB_OPTS_END,
};

static int parse_export_opts(const pb_args *a, pb_svg_opts *o, pb_error *err)
{
	memset(o, 0, sizeof *o);
	const char *c = pb_args_str(a, "color-by", "auto");
	int rc = pb_color_by_parse(c, &o->color_by, err);
	if (rc)
		return rc;
	const char *r = pb_args_str(a, "rankdir", "TB");
	if (strcmp(r, "TB") == 0 || strcmp(r, "tb") == 0)
		o->rankdir_lr = 0;
	else if (strcmp(r, "LR") == 0 || strcmp(r, "lr") == 0)
		o->rankdir_lr = 1;
	else
		return pb_err(err, PB_EUSAGE, "export: --rankdir must be TB or LR, not '%s'", r);
	const char *cl = pb_args_str(a, "collapse", "auto");
	if (strcmp(cl, "auto") == 0)
		o->collapse = PB_SVG_COLLAPSE_AUTO;
	else if (strcmp(cl, "never") == 0)
		o->collapse = PB_SVG_COLLAPSE_NEVER;
	else if (strcmp(cl, "always") == 0)
		o->collapse = PB_SVG_COLLAPSE_ALWAYS;
	else
		return pb_err(err, PB_EUSAGE,
		              "export: --collapse must be auto, never or always, not '%s'", cl);
	long mb;
	rc = pb_args_int(a, "max-boxes", PB_SVG_DEFAULT_BOXES, 1, 1000000, &mb, err);
	if (rc)
		return rc;
	o->max_boxes = (int)mb;
	o->title = pb_args_str(a, "title", NULL);
	o->show_constants = pb_args_has(a, "show-constants");
	return PB_OK;
}

static int cmd_export(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	const char *outp = pb_args_str(a, "output", NULL);
	if (!outp)
		return pb_err(err, PB_EUSAGE, "export: -o FILE is required (usage: %s)",
		              cmd->usage);
	pb_svg_opts o;
	int rc = parse_export_opts(a, &o, err);
	if (rc)
		return rc;
	const char *layout = pb_args_str(a, "layout", NULL);
	if (layout && (rc = pb_session_open_layout(s, layout, err)) != PB_OK)
		return rc;
	const char *plan_path = pb_args_str(a, "plan", NULL);
	if (plan_path && pb_same_file(outp, plan_path))
		return pb_err(err, PB_EUSAGE,
		              "export: -o %s is the plan file being read (--plan); write elsewhere",
		              outp);
	pb_plan *loaded = NULL;
	if (plan_path && (rc = pb_plan_load(plan_path, s->graph->n_nodes, &loaded, err)) != PB_OK)
		return rc;
	const pb_plan *plan = loaded ? loaded : s->plan;
	if (pb_args_has(a, "chip")) {
		pb_chip_svg_stats cs;
		/* a plan without a placement is bad input: name its file */
		if (plan && (rc = pb_chip_svg_check(plan, err))) {
			pb_plan_free(loaded);
			return plan_path ? pb_err_prefix(err, "%s", plan_path) : rc;
		}
		rc =
		    plan
		        ? pb_chip_svg_write(plan, o.title ? o.title : s->model_path, outp, &cs, err)
		        : pb_err(err, PB_EUSAGE,
		                 "export --chip: no plan (run 'partition' on a routed mesh layout "
		                 "or give --plan FILE)");
		pb_plan_free(loaded);
		if (rc)
			return rc;
		fprintf(
		    ctx->out,
		    "wrote %s: floorplan %dx%d, %d cores, %d loaded links, most loaded %.6f MB\n",
		    outp, cs.rows, cs.cols, cs.cells, cs.links, cs.max_load / 1e6);
		return PB_OK;
	}
	pb_plan *branches = NULL;
	if (o.color_by == PB_COLOR_BRANCH && !(plan && strcmp(plan->kind, "branch") == 0)) {
		if ((rc = pb_branch_plan_of(s, &branches, err)) != PB_OK) {
			pb_plan_free(loaded);
			return rc;
		}
		plan = branches;
	}
	/* a plan made at another batch (shard/pipeline --batch) is drawn on the
	 * model reopened at it, so shapes and bytes are the plan's */
	pb_session *at = NULL;
	const pb_graph *g = s->graph;
	long gb = pb_plan_graph_batch(g), pbat = plan ? plan->model_batch : 0;
	if (pbat > 0 && gb > 0 && pbat != gb) {
		pb_error e2 = {0};
		at = pb_session_new();
		int r2 =
		    at ? pb_session_open_model(at, s->model_path, s->overrides, s->n_overrides, &e2)
		       : pb_err(&e2, PB_ENOMEM, "out of memory");
		if (r2 == PB_OK)
			r2 = pb_session_set_batch(at, pbat, &e2);
		if (r2 == PB_OK && at->graph->n_nodes == plan->n_nodes) {
			g = at->graph;
		} else {
			fprintf(ctx->log,
			        "export: warning: the plan was made at batch %ld; shapes drawn at "
			        "batch %ld (%s)\n",
			        pbat, gb, r2 ? e2.msg : "the model at that batch has other nodes");
		}
	}
	pb_cmd_progress(ctx, 0.0, "export: laying out %d nodes", g->n_nodes);
	pb_svg_stats st;
	rc = pb_svg_export_file(g, plan, s->hw, &o, outp, &st, err);
	pb_cmd_progress(ctx, -1, "%s", "");
	pb_session_free(at);
	pb_plan_free(loaded);
	pb_plan_free(branches);
	if (rc)
		return rc;
	if (pb_args_has(a, "json")) {
		json_t *j =
		    json_pack("{s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:f,s:f}", "output", outp,
		              "nodes", st.n_nodes, "boxes", st.n_boxes, "hidden_boxes",
		              st.n_hidden_boxes, "collapse_depth", st.depth, "edges", st.n_edges,
		              "cross_edges", st.n_cross_edges, "constant_edges", st.n_static_edges,
		              "clusters", st.n_clusters, "fused_boxes", st.n_fused_boxes,
		              "layout_s", st.layout_s, "render_s", st.render_s);
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
		fputc('\n', ctx->out);
		json_decref(j);
	} else {
		fprintf(ctx->out, "wrote %s: %d nodes", outp, st.n_nodes);
		if (st.depth != -1)
			fprintf(ctx->out, " collapsed to %d boxes (module depth %d)", st.n_boxes,
			        st.depth);
		if (st.n_hidden_boxes)
			fprintf(ctx->out, ", %d box%s of constants hidden", st.n_hidden_boxes,
			        st.n_hidden_boxes == 1 ? "" : "es");
		char t1[32], t2[32];
		fprintf(
		    ctx->out,
		    ", %d clusters, %d edges (%d across groups, %d of constants); dot %s, svg %s\n",
		    st.n_clusters, st.n_edges, st.n_cross_edges, st.n_static_edges,
		    pb_fmt_time(st.layout_s, t1, sizeof t1),
		    pb_fmt_time(st.render_s, t2, sizeof t2));
	}
	return PB_OK;
}

static const pb_opt plot_opts[] = {
    {.name = "output",
     .short_name = 'o',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "where to write the SVG (required)",
     .path = "w"},
    {.name = "title",
     .short_name = 't',
     .type = PB_OPT_STR,
     .metavar = "TEXT",
     .help = "chart title"},
    {.name = "mem-limit",
     .type = PB_OPT_DOUBLE,
     .metavar = "BYTES",
     .help = "memory limit line for 'load' (default: the plan's memory_limit metric)"},
    {.name = "width",
     .type = PB_OPT_INT,
     .metavar = "PX",
     .help = "chart width in pixels (default 900)"},
    {.name = "schedule",
     .type = PB_OPT_STR,
     .metavar = "NAME",
     .help = "timeline: which of the plan's schedules (gpipe, 1f1b; default 1f1b)"},
    PB_OPTS_END,
};

static int cmd_plot(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	const char *kind = pb_args_pos(a, 0), *input = pb_args_pos(a, 1);
	const char *outp = pb_args_str(a, "output", NULL);
	if (!kind || !outp)
		return pb_err(err, PB_EUSAGE, "plot: usage: %s", cmd->usage);
	pb_plot_opts o = {0};
	o.title = pb_args_str(a, "title", NULL);
	o.schedule = pb_args_str(a, "schedule", NULL);
	long w;
	int rc = pb_args_double(a, "mem-limit", NAN, 0, INFINITY, &o.mem_limit, err);
	if (rc || (rc = pb_args_int(a, "width", 900, 300, 20000, &w, err)) != PB_OK)
		return rc;
	o.width = (int)w;
	int k;
	if ((rc = pb_plot_kind_parse(kind, &k, err)) != PB_OK)
		return rc;
	if (input && pb_same_file(outp, input))
		return pb_err(err, PB_EUSAGE,
		              "plot: -o %s is the input file being read; write elsewhere", outp);
	const pb_plan *plan = NULL;
	pb_plan *loaded = NULL;
	const char *src = input;
	if (k == PB_PLOT_LOAD || k == PB_PLOT_TIMELINE) {
		if (input) {
			if ((rc = pb_plan_load(input, -1, &loaded, err)) != PB_OK)
				return rc;
			plan = loaded;
		} else if (ctx->s->plan) {
			plan = ctx->s->plan;
			src = "current plan";
		} else {
			return pb_err(err, PB_EUSAGE,
			              "plot %s: give a plan JSON file (no plan is open)", kind);
		}
	} else if (!input) {
		return pb_err(err, PB_EUSAGE, "plot %s: give the log file (JSON lines)", kind);
	}
	char *svg = NULL;
	size_t len = 0;
	rc = pb_plot_render(k, src, plan, &o, &svg, &len, err);
	pb_plan_free(loaded);
	if (rc)
		return rc;
	rc = pb_plot_write(outp, svg, len, err);
	free(svg);
	if (rc == PB_OK)
		fprintf(ctx->out, "wrote %s (%s plot of %s)\n", outp, kind, src);
	return rc;
}

const pb_command pb_cmds_export[] = {
    {.name = "export",
     .usage = "export [MODEL] [--plan FILE] [--layout L] [--color-by MODE] [--rankdir TB|LR] "
              "[--chip] -o OUT.svg",
     .summary = "annotated SVG of the graph and plan (clusters, legend, title block, tooltips)",
     .opts = export_opts,
     .fn = cmd_export,
     .flags = PB_CMD_GRAPH | PB_CMD_SVG_OUT,
     .help = "One cluster per plan group (core group, stage, backend or fusion group), node\n"
             "labels (op, name, output shape, MACs), bytes on edges between groups, a title\n"
             "block with the plan's metrics and a tooltip per node. Graphs with more nodes\n"
             "than --max-boxes are collapsed by module path (docs/export.md).\n"
             "Without -o, a last argument ending in .svg is the output file.\n"
             "--chip: the floorplan of a placed plan (routed mesh layouts, docs/mesh.md): one\n"
             "cell per core coloured by group, the loaded links as heat arrows (legend in MB),\n"
             "the I/O corner, the groups with their cores and times.",
     .script = PB_SCRIPT_CALLS,
     .paths = ""},
    {.name = "plot",
     .usage = "plot KIND [INPUT] -o OUT.svg",
     .summary = "SVG chart: training (RL curve), load (per-group bars), timeline (pipeline), tune",
     .opts = plot_opts,
     .fn = cmd_plot,
     .flags = PB_CMD_SVG_OUT,
     .help =
         "KIND and INPUT:\n"
         "  training LOG.jsonl   reward and gap per episode (RL training log)\n"
         "  tune LOG.jsonl       GFLOP/s against trials (tuning log)\n"
         "  load PLAN.json       per-group time and storage against the memory limit\n"
         "  timeline PLAN.json   pipeline schedule (detail.schedule; 1F1B synthesized if absent)\n"
         "load/timeline use the open session's plan when INPUT is omitted.\n"
         "Without -o, a last argument ending in .svg is the output file.\n"
         "Input fields are documented in docs/export.md.",
     .script = PB_SCRIPT_CALLS,
     .paths = "r@1:data"},
    {0},
};
