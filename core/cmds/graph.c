/*
 * cmds/graph.c — commands that show or convert the model: info, convert.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "cost.h"
#include "shape.h"

static const pb_opt info_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_JSON,
    {"csv", 0, PB_OPT_FLAG, NULL, "print the per-node table as CSV"},
    {"top", 't', PB_OPT_INT, "N", "show only the N nodes with the most MACs"},
    PB_OPTS_END};

static int cmp_macs_desc(const void *a, const void *b, void *ud)
{
	const pb_graph *g = ud;
	double x = g->nodes[*(const int *)a].cost.macs, y = g->nodes[*(const int *)b].cost.macs;
	if (x != y)
		return x < y ? 1 : -1;
	return *(const int *)a - *(const int *)b;
}

static const char *first_output_shape(const pb_graph *g, const pb_node *n, char *buf, size_t len)
{
	for (int j = 0; j < n->n_outputs; j++)
		if (n->outputs[j] >= 0)
			return pb_tensor_shape_str(&g->tensors[n->outputs[j]], buf, len);
	snprintf(buf, len, "-");
	return buf;
}

static void human(double v, char *buf, size_t len)
{
	const char *u[] = {"", "K", "M", "G", "T"};
	int k = 0;
	while (fabs(v) >= 1000 && k < 4) {
		v /= 1000;
		k++;
	}
	snprintf(buf, len, k ? "%.2f%s" : "%.0f%s", v, u[k]);
}

static json_t *totals_json(const pb_graph *g)
{
	json_t *t = json_object();
	json_object_set_new(t, "nodes", json_integer(g->n_nodes));
	json_object_set_new(t, "tensors", json_integer(g->n_tensors));
	json_object_set_new(t, "macs", json_real(g->total.macs));
	json_object_set_new(t, "flops", json_real(g->total.flops));
	json_object_set_new(t, "params", json_real(g->total.params));
	json_object_set_new(t, "param_bytes", json_real(g->total.param_bytes));
	json_object_set_new(t, "activation_bytes", json_real(g->total.out_bytes));
	json_object_set_new(t, "unknown_shapes", json_integer(g->n_unknown_shapes));
	char names[512];
	if (pb_shape_unresolved_inputs(g, names, sizeof names))
		json_object_set_new(t, "unresolved_inputs", json_string(names));
	return t;
}

static int cmd_info(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	const pb_graph *g = ctx->s->graph;
	long top;
	int rc = pb_args_int(a, "top", 0, 0, 1L << 30, &top, err);
	if (rc)
		return rc;
	int *idx = malloc((size_t)(g->n_nodes + 1) * sizeof *idx);
	for (int i = 0; i < g->n_nodes; i++)
		idx[i] = i;
	int n = g->n_nodes;
	if (top > 0) {
		qsort_r(idx, (size_t)n, sizeof *idx, cmp_macs_desc, (void *)g);
		if (top < n)
			n = (int)top;
	}
	char shape[128];
	if (pb_args_has(a, "json")) {
		json_t *j = json_object();
		json_object_set_new(j, "model", json_string(g->path));
		json_object_set_new(j, "format", json_string(g->format));
		json_t *nodes = json_array();
		for (int k = 0; k < n; k++) {
			const pb_node *nd = &g->nodes[idx[k]];
			json_t *o = json_object();
			json_object_set_new(o, "id", json_integer(idx[k]));
			json_object_set_new(o, "name", json_string(nd->name));
			json_object_set_new(o, "op", json_string(nd->op));
			json_object_set_new(
			    o, "shape",
			    json_string(first_output_shape(g, nd, shape, sizeof shape)));
			json_object_set_new(o, "macs", json_real(nd->cost.macs));
			json_object_set_new(o, "flops", json_real(nd->cost.flops));
			json_object_set_new(o, "params", json_real(nd->cost.params));
			json_object_set_new(o, "activation_bytes", json_real(nd->cost.out_bytes));
			json_array_append_new(nodes, o);
		}
		json_object_set_new(j, "nodes", nodes);
		json_object_set_new(j, "totals", totals_json(g));
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
		fputc('\n', ctx->out);
		json_decref(j);
	} else if (pb_args_has(a, "csv")) {
		fprintf(ctx->out, "id,name,op,shape,macs,flops,params,activation_bytes\n");
		for (int k = 0; k < n; k++) {
			const pb_node *nd = &g->nodes[idx[k]];
			fprintf(ctx->out, "%d,\"%s\",%s,%s,%.0f,%.0f,%.0f,%.0f\n", idx[k], nd->name,
			        nd->op, first_output_shape(g, nd, shape, sizeof shape),
			        nd->cost.macs, nd->cost.flops, nd->cost.params, nd->cost.out_bytes);
		}
	} else {
		char m[32], p[32], b[32];
		fprintf(ctx->out, "%5s  %-40s %-20s %-18s %10s %10s %10s\n", "id", "name", "op",
		        "output shape", "MACs", "params", "act bytes");
		for (int k = 0; k < n; k++) {
			const pb_node *nd = &g->nodes[idx[k]];
			human(nd->cost.macs, m, sizeof m);
			human(nd->cost.params, p, sizeof p);
			human(nd->cost.out_bytes, b, sizeof b);
			fprintf(ctx->out, "%5d  %-40.40s %-20.20s %-18.18s %10s %10s %10s\n",
			        idx[k], nd->name, nd->op,
			        first_output_shape(g, nd, shape, sizeof shape), m, p, b);
		}
		human(g->total.macs, m, sizeof m);
		human(g->total.params, p, sizeof p);
		human(g->total.out_bytes, b, sizeof b);
		char f[32];
		human(g->total.flops, f, sizeof f);
		fprintf(ctx->out,
		        "\n%s: %d nodes, %d tensors | MACs %s (%.4f G) | FLOPs %s | params %s | "
		        "activations %sB\n",
		        g->path, g->n_nodes, g->n_tensors, m, g->total.macs / 1e9, f, p, b);
		if (g->n_unknown_shapes) {
			char names[512];
			int k = pb_shape_unresolved_inputs(g, names, sizeof names);
			fprintf(ctx->out, "warning: %d nodes have outputs of unknown shape\n",
			        g->n_unknown_shapes);
			if (k) {
				char first[256];
				snprintf(first, sizeof first, "%s", names);
				char *sp = strchr(first, ' ');
				if (sp)
					*sp = '\0';
				fprintf(
				    ctx->out,
				    "hint: input dims without a value: %s\n"
				    "      rerun with --input %s (the names replaced by sizes)%s\n",
				    names, first, k > 1 ? ", one --input per input" : "");
			}
		}
	}
	free(idx);
	return PB_OK;
}

static const pb_opt convert_opts[] = {
    PB_OPTS_GRAPH,
    {"output", 'o', PB_OPT_STR, "FILE", "where to write partbench's JSON graph (required)"},
    PB_OPTS_END};

static int cmd_convert(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	const char *outp = pb_args_str(a, "output", NULL);
	if (!outp)
		return pb_err(err, PB_EUSAGE, "convert: -o FILE is required");
	int rc = pb_json_graph_save(ctx->s->graph, outp, err);
	if (rc == PB_OK)
		fprintf(ctx->log, "wrote %s (%d nodes)\n", outp, ctx->s->graph->n_nodes);
	return rc;
}

const pb_command pb_cmds_graph[] = {
    {"info", "info [MODEL] [--input NAME=DIMS] [--json|--csv] [--top N]",
     "per-node table (shape, MACs, params, activation bytes) and totals", info_opts, cmd_info,
     PB_CMD_GRAPH,
     "MODEL is an ONNX (.onnx), Graphviz (.dot/.gv) or partbench JSON (.json) graph.\n"
     "MACs count Conv/ConvTranspose/Gemm/MatMul/Einsum multiply-accumulates;\n"
     "see docs/formats.md for the FLOP conventions."},
    {"convert", "convert [MODEL] -o OUT.json", "write the model as partbench's JSON graph",
     convert_opts, cmd_convert, PB_CMD_GRAPH, NULL},
    {0}};
