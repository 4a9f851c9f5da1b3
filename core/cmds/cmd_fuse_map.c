/*
 * cmds/cmd_fuse_map.c — graph transformations: `fuse` (horizontal fusion of
 * parallel branch groups) and `map` (multi-backend mapping).
 *
 * fuse prints the report (JSON with --json), writes the fused graph with -o,
 * and either sets a "fuse" plan on the open graph (default) or replaces the
 * session's graph with the fused one (--apply) so that it can be drawn and
 * exported like any model. map sets a "map" plan whose groups are the
 * backend aggregates, labelled by backend.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "cmds/unknown_costs.h"
#include "model/json_graph.h"
#include "script/hooks.h"
#include "transform/fuse.h"
#include "transform/map.h"
#include "tune/node_costs.h"
#include "util/fmt.h"
#include "util/proof_label.h"

static const pb_opt fuse_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_JSON,
    {.name = "output",
     .short_name = 'o',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "write the fused graph (partbench JSON graph format)",
     .path = "w"},
    {.name = "plan",
     .short_name = 'p',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "also save the 'fuse' plan of the original graph (for export --plan FILE)",
     .path = "w"},
    {.name = "apply",
     .type = PB_OPT_FLAG,
     .help = "replace the open graph with the fused one (default: set a 'fuse' plan on it)"},
    {.name = "layout",
     .short_name = 'l',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "read the cost model from the layout's `fusion` table (optional)",
     .path = "r:lua"},
    {.name = "nonfusable",
     .type = PB_OPT_LIST,
     .metavar = "OP",
     .help = "also treat operator OP as non-fusable (repeatable)"},
    {.name = "fusable",
     .type = PB_OPT_LIST,
     .metavar = "OP",
     .help = "treat OP as fusable, e.g. --fusable Conv (repeatable; default non-fusable: MatMul, "
             "Gemm, Conv)"},
    {.name = "keep-constants",
     .type = PB_OPT_FLAG,
     .help = "treat load-time constants (weights behind Identity, Constant, evaluated shape math) "
             "as kernels too"},
    {.name = "min-gain",
     .type = PB_OPT_DOUBLE,
     .metavar = "S",
     .help = "fuse only when the model saves more than S seconds (0)"},
    {.name = "max-members",
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "at most N nodes per fused kernel (16)"},
    PB_OPTS_END,
};

/* A rule for an operator no node of the open graph has is most likely a
 * typo ("Maxpool"): say so rather than silently doing nothing. */
static void warn_absent_op(pb_cmd_ctx *ctx, const char *flag, const char *op)
{
	const pb_graph *g = ctx->s->graph;
	if (!g)
		return;
	for (int i = 0; i < g->n_nodes; i++)
		if (strcmp(g->nodes[i].op, op) == 0)
			return;
	fprintf(ctx->log, "warning: --%s %s: no node of %s has op '%s' (ops are case-sensitive)\n",
	        flag, op, g->path ? g->path : "the graph", op);
}

static int fuse_options(pb_cmd_ctx *ctx, const pb_args *a, pb_fuse_rules *rules, pb_fuse_opts *o,
                        pb_error *err)
{
	pb_fuse_opts_default(o);
	const pb_fuse_rules *session_rules = pb_fuse_rules_of(ctx->s);
	if (!session_rules)
		return pb_err(err, PB_ENOMEM, "fuse: out of memory");
	*rules = *session_rules;
	o->rules = rules;
	const char **list;
	int n = pb_args_list(a, "nonfusable", &list);
	for (int i = 0; i < n; i++) {
		int rc = pb_fuse_rules_set_op(rules, list[i], 0, err);
		if (rc)
			return rc;
		warn_absent_op(ctx, "nonfusable", list[i]);
	}
	n = pb_args_list(a, "fusable", &list);
	for (int i = 0; i < n; i++) {
		int rc = pb_fuse_rules_set_op(rules, list[i], 1, err);
		if (rc)
			return rc;
		warn_absent_op(ctx, "fusable", list[i]);
	}
	const char *layout = pb_args_str(a, "layout", NULL);
	if (layout) {
		int rc = pb_session_open_layout(ctx->s, layout, err);
		if (rc)
			return rc;
	}
	/* The open layout (if any) supplies the model's device parameters. */
	int rc = pb_fuse_model_from_hw(ctx->s->hw, &o->model, err);
	if (rc)
		return rc;
	rc = pb_args_double(a, "min-gain", o->model.min_gain, 0, 1e3, &o->model.min_gain, err);
	if (rc)
		return rc;
	long mm;
	rc = pb_args_int(a, "max-members", o->model.max_members, 2, 1 << 20, &mm, err);
	if (rc)
		return rc;
	o->model.max_members = (int)mm;
	o->keep_constants = pb_args_has(a, "keep-constants");
	return PB_OK;
}

static void fuse_print(FILE *out, const pb_graph *g, const pb_fuse_result *r, const pb_fuse_opts *o,
                       const json_t *rep)
{
	fprintf(out, "%s: %d nodes (%d load-time constants, no kernels)\n", g->path, g->n_nodes,
	        r->n_folded);
	fprintf(out, "parallel branch groups: %d (", r->groups->n);
	for (int k = 0; k < PB_BRANCH_NKINDS; k++)
		fprintf(out, "%s%s %d", k ? ", " : "", pb_branch_kind_name(k),
		        r->groups->per_kind[k]);
	fprintf(out, ")\n");
	fprintf(out, "non-fusable nodes removed from sub-branches: %d\n", r->nonfusable_removed);
	fprintf(out, "fusible candidates: %d; fused: %d nodes into %d kernels\n", r->candidates,
	        r->nodes_fused, r->n_fusions);
	fprintf(out, "kernel launches: %d -> %d\n", r->launches_before, r->launches_after);
	char b1[32], b2[32];
	pb_fmt_time_fixed(r->time_before, b1, sizeof b1);
	pb_fmt_time_fixed(r->time_after, b2, sizeof b2);
	fprintf(out, "modelled time: %s -> %s (x%.3f)\n", b1, b2,
	        r->time_after > 0 ? r->time_before / r->time_after : 1.0);
	pb_label L;
	char words[300];
	pb_fuse_label(g, r, o, &L);
	fprintf(out, "time after: %s\n", pb_label_text(&L, pb_fmt_time_fixed, words, sizeof words));
	fprintf(out, "acyclicity: %d fusions each proven by a search, result checked by igraph\n",
	        r->n_fusions);
	const json_t *x = json_object_get(rep, "xla_baseline");
	if (x)
		fprintf(out,
		        "XLA-style baseline (producers with one shared consumer): %d candidates, "
		        "%d fused, launches %d\n",
		        (int)json_integer_value(json_object_get(x, "candidates")),
		        (int)json_integer_value(json_object_get(x, "nodes_fused")),
		        (int)json_integer_value(json_object_get(x, "launches_after")));
}

static int cmd_fuse(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	pb_fuse_rules rules;
	pb_fuse_opts o;
	int rc = fuse_options(ctx, a, &rules, &o, err);
	if (rc)
		return rc;
	pb_hooks hk;
	pb_hooks_init(&hk, s);
	pb_hooks_fuse(&hk, &rules);
	pb_cmd_progress(ctx, 0, "fuse: searching parallel branch groups");
	pb_fuse_result *r = NULL;
	rc = pb_fuse_run(s->graph, &o, &r, err);
	/* The report runs the XLA-style baseline: with the Lua rules still
	 * installed, so both fusions obey the same `fusable` rules. */
	json_t *rep = rc ? NULL : pb_fuse_report_json(s->graph, r, &o);
	if ((rc = pb_hooks_finish(&hk, rc, err))) {
		json_decref(rep);
		pb_fuse_result_free(r);
		return rc;
	}
	pb_cmd_progress(ctx, 1, "fuse: %d nodes fused", r->nodes_fused);
	const char *outp = pb_args_str(a, "output", NULL);
	if (outp) {
		rc = pb_json_graph_save(r->fused, outp, err);
		if (rc) {
			json_decref(rep);
			pb_fuse_result_free(r);
			return rc;
		}
	}
	if (outp)
		json_object_set_new(rep, "output", json_string(outp));
	if (pb_args_has(a, "json")) {
		json_dumpf(rep, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
		fputc('\n', ctx->out);
	} else {
		fuse_print(ctx->out, s->graph, r, &o, rep);
		if (outp)
			fprintf(ctx->out, "fused graph written to %s\n", outp);
	}
	json_decref(rep);
	const char *plan_out = pb_args_str(a, "plan", NULL);
	if (plan_out) {
		pb_plan *p = pb_fuse_plan(s->graph, r, &o);
		rc = p ? pb_plan_save(p, pb_session_node_names(s), plan_out, err)
		       : pb_err(err, PB_ENOMEM, "fuse: out of memory");
		pb_plan_free(p);
		if (rc) {
			pb_fuse_result_free(r);
			return rc;
		}
	}
	if (pb_args_has(a, "apply")) {
		char label[1024];
		if (outp)
			snprintf(label, sizeof label, "%s", outp);
		else
			snprintf(label, sizeof label, "%s (fused)", s->graph->path);
		pb_graph *fg = r->fused;
		r->fused = NULL;
		pb_session_set_graph(s, fg, label);
		if (!pb_args_has(a, "json"))
			fprintf(ctx->out, "the open graph is now the fused graph (%d nodes)\n",
			        fg->n_nodes);
	} else {
		pb_plan *p = pb_fuse_plan(s->graph, r, &o);
		if (p)
			pb_session_set_plan(s, p);
	}
	ctx->redraw |= PB_REDRAW_ALL | PB_RELAYOUT;
	pb_fuse_result_free(r);
	return PB_OK;
}

/* ------------------------------------------------------------------ map */

static const pb_opt map_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_LAYOUT,
    PB_OPTS_JSON,
    {.name = "output",
     .short_name = 'o',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "write the plan (JSON) to FILE",
     .path = "w"},
    {.name = "buffers",
     .short_name = 'k',
     .type = PB_OPT_INT,
     .metavar = "K",
     .help = "buffer slots between aggregates on different backends (2)"},
    {.name = "stream",
     .short_name = 'n',
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "number of inputs in the modelled stream (16)"},
    {.name = "timeline",
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "print the pipelined timeline of the first N inputs (2)"},
    {.name = "keep-constants",
     .type = PB_OPT_FLAG,
     .help = "map load-time constants (weights behind Identity, Constant, shape math) too"},
    {.name = "priority",
     .type = PB_OPT_FLAG,
     .help = "the seed's rule only: best-priority backend per node, transfers ignored (default: "
             "transfer-aware, with the priority rule shown beside it)"},
    {.name = "objective",
     .type = PB_OPT_STR,
     .metavar = "OBJ",
     .help = "latency (serial time per input, default) or throughput (pipelined period: the "
             "busiest backend or link per input)"},
    {.name = "costs",
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "measured times (tuning log or ONNX Runtime profile): priorities per operator type "
             "ranked by time, the layout's table for the rest",
     .path = "r:data"},
    {.name = "costs-backend",
     .type = PB_OPT_STR,
     .metavar = "NAME",
     .help = "the backend --costs was measured on (default: cpu, where tune and ORT run)"},
    PB_OPTS_END,
};

/* --costs: measured node times re-rank the layout's priorities (*rep: the
 * per-operator report, NULL without --costs). */
static int map_costs(pb_cmd_ctx *ctx, const pb_args *a, pb_hetero *h, json_t **rep,
                     const char **bname, pb_error *err)
{
	*rep = NULL;
	const char *path = pb_args_str(a, "costs", NULL);
	*bname = pb_args_str(a, "costs-backend", "cpu");
	if (!path) {
		if (pb_args_has(a, "costs-backend"))
			return pb_err(err, PB_EUSAGE, "map: --costs-backend needs --costs FILE");
		return PB_OK;
	}
	int b = -1;
	for (int k = 0; k < h->n; k++)
		if (strcmp(h->b[k].name, *bname) == 0)
			b = k;
	if (b < 0)
		return pb_err(
		    err, PB_EUSAGE,
		    "map: --costs-backend %s: %s has no backend of that name (name one with "
		    "--costs-backend)",
		    *bname, h->path);
	const pb_graph *g = ctx->s->graph;
	double *t = malloc(((size_t)g->n_nodes + 1) * sizeof *t);
	if (!t)
		return pb_err(err, PB_ENOMEM, "map: out of memory");
	int found = 0;
	int rc = pb_tune_node_times(g, path, t, &found, err);
	if (rc == PB_OK && found == 0)
		rc = pb_err(err, PB_EINPUT, "%s: no measured time for any node of %s", path,
		            g->path);
	if (rc == PB_OK)
		rc = pb_map_costs_apply(g, h, b, t, path, rep, err);
	free(t);
	return rc;
}

static int cmd_map(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	long k, n, tl;
	int rc;
	if ((rc = pb_args_int(a, "buffers", 2, 1, 1024, &k, err)) ||
	    (rc = pb_args_int(a, "stream", 16, 1, 10000, &n, err)) ||
	    (rc = pb_args_int(a, "timeline", 2, 0, 1000, &tl, err)))
		return rc;
	const char *obj = pb_args_str(a, "objective", "latency");
	int objective = strcmp(obj, "latency") == 0      ? PB_MAP_LATENCY
	                : strcmp(obj, "throughput") == 0 ? PB_MAP_THROUGHPUT
	                                                 : -1;
	if (objective < 0)
		return pb_err(err, PB_EUSAGE, "map: --objective %s: expected latency or throughput",
		              obj);
	if (objective == PB_MAP_THROUGHPUT && pb_args_has(a, "priority"))
		return pb_err(err, PB_EUSAGE,
		              "map: --priority and --objective throughput exclude each other (the "
		              "priority rule chooses no assignment to optimise)");
	pb_hetero *h = NULL;
	rc = pb_hetero_parse(s->hw, &h, err);
	if (rc)
		return rc;
	json_t *costs = NULL;
	const char *cost_backend = NULL;
	if ((rc = map_costs(ctx, a, h, &costs, &cost_backend, err))) {
		pb_hetero_free(h);
		return rc;
	}
	pb_map_opts mo = {(int)k, (int)n, pb_args_has(a, "keep-constants"), NULL,
	                  !pb_args_has(a, "priority")};
	mo.objective = objective;
	pb_hooks hk;
	pb_hooks_init(&hk, s);
	pb_map_result *r = NULL;
	rc = pb_hooks_map(&hk, h, &mo, err);
	if (!rc)
		rc = pb_map_run(s->graph, h, &mo, &r, err);
	rc = pb_hooks_finish(&hk, rc, err);
	if (rc) {
		json_decref(costs);
		pb_hetero_free(h);
		return rc;
	}
	pb_plan *p = pb_map_plan(s->graph, h, r);
	if (!p) {
		json_decref(costs);
		pb_map_result_free(r);
		pb_hetero_free(h);
		return pb_err(err, PB_ENOMEM, "map: out of memory");
	}
	if (costs) {
		json_object_set_new(p->detail, "costs", json_string(pb_args_str(a, "costs", "")));
		json_object_set(p->detail, "priority_source", costs);
	}
	const char *outp = pb_args_str(a, "output", NULL);
	if (outp) {
		rc = pb_plan_save(p, pb_session_node_names(s), outp, err);
		if (rc) {
			json_decref(costs);
			pb_plan_free(p);
			pb_map_result_free(r);
			pb_hetero_free(h);
			return rc;
		}
	}
	if (pb_args_has(a, "json")) {
		json_t *j = pb_map_report_json(s->graph, h, r);
		if (costs) {
			json_object_set_new(j, "costs", json_string(pb_args_str(a, "costs", "")));
			json_object_set_new(j, "costs_backend", json_string(cost_backend));
			json_object_set(j, "priority_source", costs);
		}
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
		fputc('\n', ctx->out);
		json_decref(j);
	} else {
		if (costs)
			pb_map_costs_print(ctx->out, h, costs, cost_backend);
		pb_map_print(ctx->out, s->graph, h, r, (int)tl);
		if (outp)
			fprintf(ctx->out, "plan written to %s\n", outp);
	}
	json_decref(costs);
	pb_cmd_warn_unknown_costs(ctx, s->graph);
	pb_session_set_plan(s, p);
	ctx->redraw |= PB_REDRAW_ALL;
	pb_map_result_free(r);
	pb_hetero_free(h);
	return PB_OK;
}

const pb_command pb_cmds_fuse_map[] = {
    {.name = "fuse",
     .usage = "fuse [MODEL] [--json] [-o fused.json] [--plan plan.json] [--apply]",
     .summary = "fuse nodes of parallel branch groups (horizontal fusion)",
     .opts = fuse_opts,
     .fn = cmd_fuse,
     .flags = PB_CMD_GRAPH,
     .help = "Finds parallel branch groups (common parent, common child, no parent, no child,\n"
             "parent-and-child, local), drops non-fusable nodes, and fuses nodes taken from\n"
             "different sub-branches while the cost model says it pays; the graph is checked\n"
             "acyclic with igraph after every fusion. See docs/transform.md.",
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {.name = "map",
     .usage = "map [MODEL] --layout layouts/hetero.lua [--objective latency|throughput] [--costs "
              "FILE] [--json] [-o plan.json]",
     .summary = "map nodes to heterogeneous backends, aggregate, and model pipelining",
     .opts = map_opts,
     .fn = cmd_map,
     .flags = PB_CMD_GRAPH | PB_CMD_LAYOUT,
     .help = "Marks every node with the backends that support it, picks the highest-priority\n"
             "one, then (unless --priority) moves nodes and regions to other supporting\n"
             "backends where the transfers and launches saved outweigh the priority gain\n"
             "(the priority rule's figures are shown beside), merges connected same-backend\n"
             "nodes into aggregates without crossing\n"
             "another backend or creating a cycle, adds buffers between backends and models\n"
             "pipelined execution over a stream of inputs. --objective throughput chooses the\n"
             "backends for the pipelined period instead (the busiest backend or link per input;\n"
             "every assignment when there are few). --costs FILE ranks the priorities of the\n"
             "measured operator types by time. See docs/transform.md.",
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {0},
};
