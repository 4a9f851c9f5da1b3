/*
 * cmds/cmd_info.c — commands that show or convert the model: info, convert.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "model/json_graph.h"
#include "shape/cost.h"
#include "shape/shape.h"
#include "util/fmt.h"

static const pb_opt info_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_JSON,
    {.name = "csv", .type = PB_OPT_FLAG, .help = "print the per-node table as CSV"},
    {.name = "top",
     .short_name = 't',
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "show only the N nodes with the most MACs"},
    PB_OPTS_END,
};

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

/* The table's numbers: two decimals in their unit, no space ("1.81G",
 * "512.00K"; a whole count below 1000 as is), so they fit 10 columns. */
static char *table_num(double v, char *buf, size_t len)
{
	return pb_fmt_num(v, PB_FMT_COUNT, 2, PB_FMT_TIGHT, buf, len);
}

/* ---- the text table: rows are assembled by hand into a large buffer and
 * written in big blocks (printf per field was ~10 ms of `info` on a
 * 6.6k-node model). The layout is exactly that of the format
 * "%5d  %-40.40s %-20.20s %-18.18s %10s %10s %10s\n". */
typedef struct {
	FILE *f;
	size_t n;
	char buf[1 << 16];
} outbuf;

static void ob_flush(outbuf *o)
{
	if (o->n)
		fwrite(o->buf, 1, o->n, o->f);
	o->n = 0;
}

/* Appends s (at most `prec` bytes when prec >= 0), padded with spaces to
 * `width`: on the left when right-aligned, else on the right. */
static void ob_field(outbuf *o, const char *s, int width, int prec, int right)
{
	size_t n = prec >= 0 ? strnlen(s, (size_t)prec) : strlen(s);
	size_t pad = n < (size_t)width ? (size_t)width - n : 0;
	if (o->n + n + pad + 1 > sizeof o->buf) {
		ob_flush(o);
		if (n + pad + 1 > sizeof o->buf) { /* longer than the whole buffer */
			fprintf(o->f, right ? "%*s" : "%-*s", width, s);
			return;
		}
	}
	if (right) {
		memset(o->buf + o->n, ' ', pad);
		o->n += pad;
	}
	memcpy(o->buf + o->n, s, n);
	o->n += n;
	if (!right) {
		memset(o->buf + o->n, ' ', pad);
		o->n += pad;
	}
}

static void ob_char(outbuf *o, char c)
{
	if (o->n + 1 > sizeof o->buf)
		ob_flush(o);
	o->buf[o->n++] = c;
}

static void table_rows(FILE *out, const pb_graph *g, const int *idx, int n)
{
	outbuf *o = malloc(sizeof *o);
	if (o) {
		o->f = out;
		o->n = 0;
	}
	char shape[128], m[32], p[32], b[32], id[16];
	for (int k = 0; k < n; k++) {
		const pb_node *nd = &g->nodes[idx[k]];
		table_num(nd->cost.macs, m, sizeof m);
		table_num(nd->cost.params, p, sizeof p);
		table_num(nd->cost.out_bytes, b, sizeof b);
		const char *sh = first_output_shape(g, nd, shape, sizeof shape);
		if (!o) {
			fprintf(out, "%5d  %-40.40s %-20.20s %-18.18s %10s %10s %10s\n", idx[k],
			        nd->name, nd->op, sh, m, p, b);
			continue;
		}
		int len = 0;
		unsigned v = (unsigned)idx[k]; /* ids are >= 0 */
		char tmp[12];
		do {
			tmp[len++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		for (int i = 0; i < len; i++)
			id[i] = tmp[len - 1 - i];
		id[len] = '\0';
		ob_field(o, id, 5, -1, 1);
		ob_field(o, "  ", 0, -1, 0);
		ob_field(o, nd->name, 40, 40, 0);
		ob_char(o, ' ');
		ob_field(o, nd->op, 20, 20, 0);
		ob_char(o, ' ');
		ob_field(o, sh, 18, 18, 0);
		ob_char(o, ' ');
		ob_field(o, m, 10, -1, 1);
		ob_char(o, ' ');
		ob_field(o, p, 10, -1, 1);
		ob_char(o, ' ');
		ob_field(o, b, 10, -1, 1);
		ob_char(o, '\n');
	}
	if (o)
		ob_flush(o);
	free(o);
}

/* The constants rewritten for the batch --input set (shape/shape_batch.c). */
static json_t *rewrites_json(const pb_graph *g)
{
	json_t *arr = json_array();
	for (int i = 0; i < g->n_rewrites; i++) {
		const pb_batch_rewrite *r = &g->rewrites[i];
		json_array_append_new(
		    arr, json_pack("{s:s, s:s, s:i, s:I, s:I}", "node", g->nodes[r->node].name,
		                   "constant", g->tensors[r->tensor].name, "entry", r->entry,
		                   "from", (json_int_t)r->from, "to", (json_int_t)r->to));
	}
	return arr;
}

static void rewrites_text(FILE *out, const pb_graph *g)
{
	if (!g->batch_exported || g->shapes_given) /* a graph that states its shapes */
		return;
	fprintf(out, "batch: --input set %lld where the model was exported at %lld; ",
	        (long long)g->batch_new, (long long)g->batch_exported);
	if (!g->n_rewrites) {
		fprintf(out, "no constant holds the exported batch\n");
		return;
	}
	fprintf(out, "%d constant entr%s rewritten (docs/onnx.md):\n", g->n_rewrites,
	        g->n_rewrites == 1 ? "y" : "ies");
	for (int i = 0; i < g->n_rewrites; i++) {
		const pb_batch_rewrite *r = &g->rewrites[i];
		fprintf(out, "  %s (%s): '%s'[%d] %lld -> %lld\n", g->nodes[r->node].name,
		        g->nodes[r->node].op, g->tensors[r->tensor].name, r->entry,
		        (long long)r->from, (long long)r->to);
	}
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

/* One model at most: a second positional is a typo (a missing option name),
 * not something to ignore. */
static int one_model_only(const pb_command *cmd, const pb_args *a, pb_error *err)
{
	if (a->n_pos > 1)
		return pb_err(err, PB_EUSAGE, "%s: unexpected argument '%s' (usage: %s)", cmd->name,
		              a->pos[1], cmd->usage);
	return PB_OK;
}

/* A CSV field, quoted (always, or only when it holds a comma, quote or line
 * break) with inner quotes doubled (RFC 4180): ONNX names may hold anything. */
static void csv_field(FILE *out, const char *s, int always)
{
	if (!always && !s[strcspn(s, ",\"\r\n")]) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static int cmd_info(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	const pb_graph *g = ctx->s->graph;
	long top;
	int rc = one_model_only(cmd, a, err);
	if (rc)
		return rc;
	if (pb_args_has(a, "json") && pb_args_has(a, "csv"))
		return pb_err(err, PB_EUSAGE, "info: --json and --csv exclude each other");
	rc = pb_args_int(a, "top", 0, 0, 1L << 30, &top, err);
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
			json_t *outs = json_array(); /* every output, by name */
			for (int i = 0; i < nd->n_outputs; i++)
				if (nd->outputs[i] >= 0) {
					const pb_tensor *t = &g->tensors[nd->outputs[i]];
					json_array_append_new(
					    outs,
					    json_pack("{s:s, s:s}", "name", t->name, "shape",
					              pb_tensor_shape_str(t, shape, sizeof shape)));
				}
			json_object_set_new(o, "outputs", outs);
			json_array_append_new(nodes, o);
		}
		json_object_set_new(j, "nodes", nodes);
		json_object_set_new(j, "totals", totals_json(g));
		if (g->batch_exported) {
			json_object_set_new(j, "batch_exported", json_integer(g->batch_exported));
			json_object_set_new(j, "batch", json_integer(g->batch_new));
		}
		json_object_set_new(j, "batch_rewrites", rewrites_json(g));
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
		fputc('\n', ctx->out);
		json_decref(j);
	} else if (pb_args_has(a, "csv")) {
		fprintf(ctx->out, "id,name,op,shape,macs,flops,params,activation_bytes\n");
		for (int k = 0; k < n; k++) {
			const pb_node *nd = &g->nodes[idx[k]];
			fprintf(ctx->out, "%d,", idx[k]);
			csv_field(ctx->out, nd->name, 1);
			fputc(',', ctx->out);
			csv_field(ctx->out, nd->op, 0);
			fprintf(ctx->out, ",%s,%.0f,%.0f,%.0f,%.0f\n",
			        first_output_shape(g, nd, shape, sizeof shape), nd->cost.macs,
			        nd->cost.flops, nd->cost.params, nd->cost.out_bytes);
		}
	} else {
		char m[32], p[32], b[32];
		fprintf(ctx->out, "%5s  %-40s %-20s %-18s %10s %10s %10s\n", "id", "name", "op",
		        "output shape", "MACs", "params", "act bytes");
		table_rows(ctx->out, g, idx, n);
		table_num(g->total.macs, m, sizeof m);
		table_num(g->total.params, p, sizeof p);
		pb_fmt_num(g->total.out_bytes, PB_FMT_BYTES, 2, PB_FMT_TIGHT, b, sizeof b);
		char f[32];
		table_num(g->total.flops, f, sizeof f);
		fprintf(ctx->out,
		        "\n%s: %d nodes, %d tensors | MACs %s (%.4f G) | FLOPs %s | params %s | "
		        "activations %s\n",
		        g->path, g->n_nodes, g->n_tensors, m, g->total.macs / 1e9, f, p, b);
		rewrites_text(ctx->out, g);
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
    {.name = "output",
     .short_name = 'o',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "where to write partbench's JSON graph (required)",
     .path = "w"},
    PB_OPTS_END,
};

static int cmd_convert(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	const char *outp = pb_args_str(a, "output", NULL);
	int rc = one_model_only(cmd, a, err);
	if (rc)
		return rc;
	if (!outp)
		return pb_err(err, PB_EUSAGE, "convert: -o FILE is required");
	rc = pb_json_graph_save(ctx->s->graph, outp, err);
	if (rc == PB_OK)
		fprintf(ctx->log, "wrote %s (%d nodes)\n", outp, ctx->s->graph->n_nodes);
	return rc;
}

const pb_command pb_cmds_info[] = {
    {.name = "info",
     .usage = "info [MODEL] [--input NAME=DIMS] [--json|--csv] [--top N]",
     .summary = "per-node table (shape, MACs, params, activation bytes) and totals",
     .opts = info_opts,
     .fn = cmd_info,
     .flags = PB_CMD_GRAPH,
     .help = "MODEL is an ONNX (.onnx), Graphviz (.dot/.gv) or partbench JSON (.json) graph.\n"
             "MACs count the multiply-accumulates of Conv, ConvTranspose, Gemm, MatMul,\n"
             "Einsum and RNN/GRU/LSTM (and their integer/quantised forms);\n"
             "see docs/formats.md for the FLOP conventions.",
     .script = PB_SCRIPT_CALLS,
     .paths = ""},
    {.name = "convert",
     .usage = "convert [MODEL] -o OUT.json",
     .summary = "write the model as partbench's JSON graph",
     .opts = convert_opts,
     .fn = cmd_convert,
     .flags = PB_CMD_GRAPH,
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {0},
};
