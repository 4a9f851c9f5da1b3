/*
 * svg_export.c — graph + plan to an annotated SVG through Graphviz (see
 * svg_export.h).
 *
 * Steps: (1) collapse the graph to at most a budget of boxes (collapse.h);
 * (2) build a cgraph graph: one cluster per plan group, one node per box,
 * one edge per pair of connected boxes with the summed tensor bytes, a legend
 * cluster and an HTML title block; (3) gvLayout "dot" with bounded effort for
 * big graphs; (4) gvRenderData "svg"; (5) post-process the text: drop
 * Graphviz's comments (they carry its version) and replace each node, edge
 * and cluster <title> (Graphviz puts the object's id there) by its full
 * details. Every string handed to Graphviz is built here, so the id -> detail
 * mapping is exact.
 */
#include "render/svg_export.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cgraph.h>
#include <gvc.h>

#include "render/box_module.h"
#include "render/collapse.h"
#include "util/atomic_file.h"
#include "util/fmt.h"
#include "render/palette.h"
#include "render/xml_text.h"
#include "render/gv.h"

typedef struct {
	int from, to; /* boxes */
	double bytes;
	int is_static; /* every tensor on it is a constant (Constant or folded) */
} box_edge;

typedef struct {
	const pb_graph *g;
	const pb_plan *plan;
	const pb_hw *hw;
	pb_svg_opts o;
	int color_by;
	int n_groups;     /* effective number of groups */
	const int *group; /* per node, or NULL */
	pb_collapse *col;
	box_edge *edges;
	int n_edges;
	unsigned char *box_hidden; /* per box: only constants, not drawn */
	int n_hidden, n_hidden_nodes;
	int n_const_edges; /* edges between drawn boxes that carry only constants */
	char **box_tip;    /* details per box */
	char **group_tip;  /* details per group */
	char *title_tip;
	double macs_lo, macs_hi; /* log10 range for MACs colouring */
	/* --color-by branch (a "branch" plan, branch_plan.c): colour per group
	 * = its kind; fused nodes get a thick black border. */
	int *group_color;          /* per group: palette index (NULL = the group's own) */
	unsigned char *node_fused; /* per node, or NULL */
} exporter;

/* Palette index of group gi: its kind in branch mode, else the group. */
static int gcol(const exporter *x, int gi)
{
	return x->group_color && gi >= 0 && gi < x->n_groups ? x->group_color[gi] : gi;
}

/* Branch mode: the plan's kinds (detail.group_kind, node_fused) or an
 * error when the plan is not a branch plan. */
static int branch_setup(exporter *x, pb_error *err)
{
	const json_t *gk = x->plan ? json_object_get(x->plan->detail, "group_kind") : NULL;
	const json_t *nf = x->plan ? json_object_get(x->plan->detail, "node_fused") : NULL;
	if (!json_is_array(gk) || !json_is_array(nf) ||
	    json_array_size(nf) != (size_t)x->g->n_nodes)
		return pb_err(err, PB_EUSAGE,
		              "export: --color-by branch draws a branch plan (kind 'branch', made "
		              "by export --color-by branch itself); this plan is %s",
		              x->plan ? x->plan->kind : "absent");
	x->group_color = calloc((size_t)x->n_groups + 1, sizeof *x->group_color);
	x->node_fused = calloc((size_t)x->g->n_nodes + 1, 1);
	if (!x->group_color || !x->node_fused)
		return pb_err(err, PB_ENOMEM, "export: out of memory");
	for (int gi = 0; gi < x->n_groups; gi++) {
		const json_t *k = json_array_get(gk, (size_t)gi);
		x->group_color[gi] = json_is_integer(k) ? (int)json_integer_value(k) : gi;
	}
	for (int v = 0; v < x->g->n_nodes; v++)
		x->node_fused[v] = json_integer_value(json_array_get(nf, (size_t)v)) != 0;
	return PB_OK;
}

static int box_fused(const exporter *x, int b)
{
	if (!x->node_fused)
		return 0;
	for (int i = x->col->start[b]; i < x->col->start[b + 1]; i++)
		if (x->node_fused[i])
			return 1;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int pb_color_by_parse(const char *s, int *out, pb_error *err)
{
	static const char *names[] = {"auto",   "group", "stage", "backend",
	                              "fusion", "macs",  "branch"};
	for (int i = 0; i < 7; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return PB_OK;
		}
	return pb_err(err, PB_EUSAGE,
	              "--color-by: '%s' is not one of group, stage, backend, fusion, macs, branch",
	              s);
}

const char *pb_color_by_name(int c)
{
	static const char *names[] = {"auto",   "group", "stage", "backend",
	                              "fusion", "macs",  "branch"};
	return c >= 0 && c < 7 ? names[c] : "?";
}

static const char *group_word(int c)
{
	switch (c) {
	case PB_COLOR_STAGE:
		return "stage";
	case PB_COLOR_BACKEND:
		return "backend";
	case PB_COLOR_FUSION:
		return "fusion group";
	case PB_COLOR_BRANCH:
		return "branch group";
	default:
		return "group";
	}
}

static int auto_color(const pb_plan *p)
{
	if (!p)
		return PB_COLOR_MACS;
	if (strcmp(p->kind, "pipeline") == 0)
		return PB_COLOR_STAGE;
	if (strcmp(p->kind, "map") == 0)
		return PB_COLOR_BACKEND;
	if (strcmp(p->kind, "fuse") == 0)
		return PB_COLOR_FUSION;
	if (strcmp(p->kind, "branch") == 0)
		return PB_COLOR_BRANCH;
	return PB_COLOR_GROUP;
}

/* ---- text building ---- */

typedef struct {
	char *buf;
	size_t len;
	FILE *f;
} sbuf;

static FILE *sb_open(sbuf *s)
{
	s->buf = NULL;
	s->len = 0;
	s->f = open_memstream(&s->buf, &s->len);
	return s->f;
}

static char *sb_close(sbuf *s)
{
	if (s->f)
		fclose(s->f);
	s->f = NULL;
	return s->buf;
}

/* Writes s for a Graphviz escString: backslashes doubled, invalid UTF-8
 * bytes replaced, so Graphviz neither warns nor reinterprets them. */
static const char *gv_char(unsigned char c)
{
	return c == '\\' ? "\\\\" : c < 0x20 ? " " : NULL;
}

static void gv_text(FILE *f, const char *s)
{
	pb_text_escape(f, s, gv_char);
}

/* Text in HTML-like labels: XML entities, invalid UTF-8 replaced. */
static void html_text(FILE *f, const char *s)
{
	pb_xml_escape(f, s);
}

static const char *first_shape(const pb_graph *g, const pb_node *n, char *buf, size_t len)
{
	for (int j = 0; j < n->n_outputs; j++)
		if (n->outputs[j] >= 0)
			return pb_tensor_shape_str(&g->tensors[n->outputs[j]], buf, len);
	snprintf(buf, len, "-");
	return buf;
}

/* Display name: the last two module components, plus the leaf when it is
 * more than the op's name ("layer1.0/conv1", "features.1.0/attn/Reshape_3"). */
static void short_name(const pb_node *n, char *buf, size_t len)
{
	const char *name = n->name ? n->name : "";
	while (*name == '/')
		name++;
	const char *leaf = strrchr(name, '/');
	const char *end = leaf ? leaf : name + strlen(name);
	int keep_leaf = leaf && strcmp(leaf + 1, n->op) != 0;
	const char *start = name;
	int slashes = 0;
	for (const char *p = end; p > name; p--)
		if (p[-1] == '/' && ++slashes == 2) {
			start = p;
			break;
		}
	if (!leaf) {
		snprintf(buf, len, "%s", name);
	} else if (keep_leaf) {
		snprintf(buf, len, "%.*s/%s", (int)(end - start), start, leaf + 1);
	} else {
		snprintf(buf, len, "%.*s", (int)(end - start), start);
	}
	size_t l = strlen(buf);
	if (l > 30) { /* keep the informative tail */
		memmove(buf + 3, buf + l - 27, 28);
		memcpy(buf, "...", 3);
	}
}

static int group_of_box(const exporter *x, int b)
{
	return x->group ? x->group[x->col->start[b]] : -1;
}

static const char *group_label(const exporter *x, int gi, char *buf, size_t len)
{
	if (x->plan && gi >= 0 && gi < x->plan->n_groups && x->plan->groups[gi].label[0])
		snprintf(buf, len, "%s", x->plan->groups[gi].label);
	else
		snprintf(buf, len, "%s %d", group_word(x->color_by), gi);
	return buf;
}

/* ---- op histogram of a box ---- */

typedef struct {
	const char *op;
	int n;
} op_count;

static int cmp_count(const void *a, const void *b)
{
	const op_count *x = a, *y = b;
	if (x->n != y->n)
		return y->n - x->n;
	return strcmp(x->op, y->op);
}

static int op_histogram(const exporter *x, int b, op_count *out, int max)
{
	int k = 0;
	for (int i = x->col->start[b]; i < x->col->start[b + 1]; i++) {
		const char *op = x->g->nodes[i].op;
		int j;
		for (j = 0; j < k; j++)
			if (strcmp(out[j].op, op) == 0)
				break;
		if (j < k)
			out[j].n++;
		else if (k < max)
			out[k++] = (op_count){op, 1};
	}
	qsort(out, (size_t)k, sizeof *out, cmp_count);
	return k;
}

static void box_sums(const exporter *x, int b, pb_cost *c)
{
	memset(c, 0, sizeof *c);
	for (int i = x->col->start[b]; i < x->col->start[b + 1]; i++) {
		const pb_cost *n = &x->g->nodes[i].cost;
		c->macs += isfinite(n->macs) ? n->macs : 0;
		c->flops += isfinite(n->flops) ? n->flops : 0;
		c->params += isfinite(n->params) ? n->params : 0;
		c->param_bytes += isfinite(n->param_bytes) ? n->param_bytes : 0;
		c->out_bytes += isfinite(n->out_bytes) ? n->out_bytes : 0;
	}
}

/* Label lines of box b (Graphviz escString, "\n" separated). */
static char *box_label(const exporter *x, int b)
{
	sbuf s;
	FILE *f = sb_open(&s);
	if (!f)
		return NULL;
	char a[64], sh[128];
	int first = x->col->start[b], size = pb_collapse_size(x->col, b);
	const pb_node *last = &x->g->nodes[first + size - 1];
	if (size == 1) {
		const pb_node *n = &x->g->nodes[first];
		char nm[64];
		short_name(n, nm, sizeof nm);
		gv_text(f, n->op);
		fputs("\\n", f);
		gv_text(f, nm);
		fprintf(f, "\\n%s", first_shape(x->g, n, sh, sizeof sh));
		if (n->cost.macs > 0)
			fprintf(f, "\\n%s MACs", pb_fmt_si(n->cost.macs, a, sizeof a));
	} else {
		char pre[512];
		pb_collapse_prefix(x->g, x->col, b, pre, sizeof pre);
		const char *tail = pre;
		int slashes = 0;
		for (const char *p = pre + strlen(pre); p > pre; p--)
			if (p[-1] == '/' && ++slashes == 2) {
				tail = p;
				break;
			}
		char mod[512];
		if (*tail) {
			gv_text(f, tail);
		} else if (*pb_box_module(x->g, first, first + size - 1, mod, sizeof mod)) {
			/* a box the plan's groups cut out of its module(s): named by
			 * them all the same, the informative tail kept */
			size_t l = strlen(mod);
			if (l > 40)
				fputs("...", f);
			gv_text(f, l > 40 ? mod + l - 37 : mod);
		} else {
			fprintf(f, "nodes %d-%d", first, first + size - 1);
		}
		fprintf(f, "\\n[%d ops:", size);
		op_count oc[64] = {{0}};
		int k = op_histogram(x, b, oc, 64);
		for (int j = 0; j < k && j < 2; j++) {
			fputc(' ', f);
			gv_text(f, oc[j].op);
			fprintf(f, " x%d", oc[j].n);
		}
		fprintf(f, "%s]\\n%s", k > 2 ? " ..." : "", first_shape(x->g, last, sh, sizeof sh));
		pb_cost c;
		box_sums(x, b, &c);
		if (c.macs > 0)
			fprintf(f, "\\n%s MACs", pb_fmt_si(c.macs, a, sizeof a));
	}
	return sb_close(&s);
}

static void tensor_line(FILE *f, const pb_graph *g, int tid)
{
	char sh[128];
	const pb_tensor *t = &g->tensors[tid];
	fprintf(f, "  %s: %s %s", t->name, pb_dtype_name(t->dtype),
	        pb_tensor_shape_str(t, sh, sizeof sh));
	if (t->is_initializer)
		fputs(" (weight)", f);
	fputc('\n', f);
}

static void attr_line(FILE *f, const pb_attr *at)
{
	fprintf(f, "  %s = ", at->name);
	switch (at->type) {
	case PB_ATTR_FLOAT:
		fprintf(f, "%g", at->f);
		break;
	case PB_ATTR_INT:
		fprintf(f, "%lld", (long long)at->i);
		break;
	case PB_ATTR_STRING:
		fprintf(f, "%s", at->s ? at->s : "");
		break;
	case PB_ATTR_INTS:
		fputc('[', f);
		for (int k = 0; k < at->n && k < 8; k++)
			fprintf(f, "%s%lld", k ? "," : "", (long long)at->ints[k]);
		fputs(at->n > 8 ? ",...]" : "]", f);
		break;
	case PB_ATTR_FLOATS:
		fputc('[', f);
		for (int k = 0; k < at->n && k < 8; k++)
			fprintf(f, "%s%g", k ? "," : "", at->floats[k]);
		fputs(at->n > 8 ? ",...]" : "]", f);
		break;
	default:
		fputs("(tensor/graph)", f);
	}
	fputc('\n', f);
}

static void cost_lines(FILE *f, const pb_cost *c)
{
	char a[32], b[32], d[32], e[32], h[32];
	fprintf(f, "MACs %s, FLOPs %s, params %s (%s), activations %s\n",
	        pb_fmt_si(c->macs, a, sizeof a), pb_fmt_si(c->flops, b, sizeof b),
	        pb_fmt_si(c->params, d, sizeof d), pb_fmt_bytes(c->param_bytes, e, sizeof e),
	        pb_fmt_bytes(c->out_bytes, h, sizeof h));
}

/* Full details of box b (plain text; XML-escaped when written). */
static char *box_details(const exporter *x, int b)
{
	sbuf s;
	FILE *f = sb_open(&s);
	if (!f)
		return NULL;
	char gl[128];
	int first = x->col->start[b], size = pb_collapse_size(x->col, b);
	int gi = group_of_box(x, b);
	if (size == 1) {
		const pb_node *n = &x->g->nodes[first];
		fprintf(f, "%s\nop: %s%s%s (node %d)\n", n->name, n->op, n->domain[0] ? " @" : "",
		        n->domain, first);
		if (gi >= 0)
			fprintf(f, "%s: %s\n", group_word(x->color_by),
			        group_label(x, gi, gl, sizeof gl));
		fputs("inputs:\n", f);
		for (int j = 0; j < n->n_inputs; j++)
			if (n->inputs[j] >= 0)
				tensor_line(f, x->g, n->inputs[j]);
		fputs("outputs:\n", f);
		for (int j = 0; j < n->n_outputs; j++)
			if (n->outputs[j] >= 0)
				tensor_line(f, x->g, n->outputs[j]);
		cost_lines(f, &n->cost);
		if (n->n_attrs)
			fputs("attributes:\n", f);
		for (int j = 0; j < n->n_attrs && j < 12; j++)
			attr_line(f, &n->attrs[j]);
	} else {
		char pre[512];
		pb_collapse_prefix(x->g, x->col, b, pre, sizeof pre);
		fprintf(f, "%s%s%d nodes collapsed (ids %d-%d)\n", pre, pre[0] ? "\n" : "", size,
		        first, first + size - 1);
		fprintf(f, "first: %s\nlast: %s\n", x->g->nodes[first].name,
		        x->g->nodes[first + size - 1].name);
		if (gi >= 0)
			fprintf(f, "%s: %s\n", group_word(x->color_by),
			        group_label(x, gi, gl, sizeof gl));
		pb_cost c;
		box_sums(x, b, &c);
		cost_lines(f, &c);
		op_count oc[64] = {{0}};
		int k = op_histogram(x, b, oc, 64);
		fputs("ops:", f);
		for (int j = 0; j < k; j++)
			fprintf(f, " %s x%d%s", oc[j].op, oc[j].n, j + 1 < k ? "," : "");
		fputc('\n', f);
	}
	char *t = sb_close(&s);
	size_t l = t ? strlen(t) : 0;
	if (l && t[l - 1] == '\n')
		t[l - 1] = '\0';
	return t;
}

static char *group_details(const exporter *x, int gi)
{
	sbuf s;
	FILE *f = sb_open(&s);
	if (!f)
		return NULL;
	char gl[128], a[32], b[32], c[32], d[32], e[32];
	/* a label that already says what it is ("stage 0 chunk 1" of the
	 * 3rd group) is not prefixed with the group's index ("stage 2: ...") */
	group_label(x, gi, gl, sizeof gl);
	size_t wl = strlen(group_word(x->color_by));
	if (strncmp(gl, group_word(x->color_by), wl) == 0 && gl[wl] == ' ')
		fprintf(f, "%s", gl);
	else
		fprintf(f, "%s %d: %s", group_word(x->color_by), gi, gl);
	if (x->plan && gi < x->plan->n_groups) {
		const pb_plan_group *g = &x->plan->groups[gi];
		if (g->first_unit >= 0)
			fprintf(f, "\nunits: %d from %d", g->n_units, g->first_unit);
		fprintf(f, "\ntime %s (compute %s, routing %s)\nMACs %s, storage %s",
		        pb_fmt_time(g->time, a, sizeof a), pb_fmt_time(g->compute, b, sizeof b),
		        pb_fmt_time(g->routing, c, sizeof c), pb_fmt_si(g->macs, d, sizeof d),
		        pb_fmt_bytes(g->storage, e, sizeof e));
		if (g->first_node >= 0)
			fprintf(f, "\nnodes %d-%d", g->first_node, g->last_node);
		if (g->bottleneck)
			fputs("\nBOTTLENECK (slowest group)", f);
		if (g->over_memory)
			fputs("\nOVER MEMORY", f);
	}
	return sb_close(&s);
}

/* ---- box edges ---- */

static int cmp_edge(const void *a, const void *b)
{
	const box_edge *x = a, *y = b;
	if (x->from != y->from)
		return x->from - y->from;
	return x->to - y->to;
}

static int build_edges(exporter *x, pb_error *err)
{
	size_t cap = 0, n = 0;
	for (int v = 0; v < x->g->n_nodes; v++)
		cap += (size_t)x->g->nodes[v].n_succs;
	x->edges = malloc((cap ? cap : 1) * sizeof *x->edges);
	unsigned char *st = pb_graph_constant_nodes(x->g);
	if (!x->edges || !st) {
		free(st);
		return pb_err(err, PB_ENOMEM, "export: out of memory (%zu edges)", cap);
	}
	for (int v = 0; v < x->g->n_nodes; v++) {
		const pb_node *nd = &x->g->nodes[v];
		for (int k = 0; k < nd->n_succs; k++) {
			int w = nd->succs[k];
			int bu = x->col->box_of[v], bw = x->col->box_of[w];
			if (bu == bw)
				continue;
			x->edges[n++] = (box_edge){bu, bw, pb_graph_edge_bytes(x->g, v, w), st[v]};
		}
	}
	/* Boxes of constants only (weights stored as Constant or Identity
	 * nodes, folded shape math) are not computation: hidden unless asked. */
	x->box_hidden = calloc((size_t)x->col->n_boxes + 1, 1);
	if (!x->box_hidden) {
		free(st);
		return pb_err(err, PB_ENOMEM, "export: out of memory");
	}
	for (int b = 0; b < x->col->n_boxes && !x->o.show_constants; b++) {
		int all = 1;
		for (int v = x->col->start[b]; v < x->col->start[b + 1] && all; v++)
			all = st[v];
		if (all) {
			x->box_hidden[b] = 1;
			x->n_hidden++;
			x->n_hidden_nodes += pb_collapse_size(x->col, b);
		}
	}
	free(st);
	qsort(x->edges, n, sizeof *x->edges, cmp_edge);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && x->edges[m - 1].from == x->edges[i].from &&
		    x->edges[m - 1].to == x->edges[i].to) {
			x->edges[m - 1].bytes += x->edges[i].bytes;
			x->edges[m - 1].is_static &= x->edges[i].is_static;
		} else
			x->edges[m++] = x->edges[i];
	}
	x->n_edges = (int)m;
	for (size_t i = 0; i < m; i++)
		x->n_const_edges += x->edges[i].is_static && !x->box_hidden[x->edges[i].from] &&
		                    !x->box_hidden[x->edges[i].to];
	return PB_OK;
}

/* ---- the Graphviz graph ---- */

static void set_html(Agraph_t *root, void *obj, const char *attr, const char *html)
{
	char *h = agstrdup_html(root, (char *)html);
	agsafeset(obj, (char *)attr, h, "");
	agstrfree(root, h);
}

/* A plan metric with its unit. Planners record plain numbers under names that
 * say what they are: times and bounds on max(t) in seconds, memory and
 * storage in bytes, throughputs in inputs per second, the pipeline bubble as
 * a fraction, and flags; anything else is a count or a score. */
static char *metric_text(const char *name, double v, char *buf, size_t len)
{
	char a[32];
	if (strstr(name, "throughput"))
		snprintf(buf, len, "%s/s", pb_fmt_si(v, a, sizeof a));
	else if (strstr(name, "time") || !strcmp(name, "optimum") || !strcmp(name, "lower_bound") ||
	         !strcmp(name, "bound") || !strcmp(name, "max_compute") ||
	         !strcmp(name, "max_routing"))
		pb_fmt_time(v, buf, len);
	else if (strstr(name, "memory") || strstr(name, "storage") || strstr(name, "bytes"))
		pb_fmt_bytes(v, buf, len);
	else if (!strcmp(name, "bubble"))
		snprintf(buf, len, "%.1f%%", v * 100);
	else if ((!strcmp(name, "feasible") || !strcmp(name, "optimal")) && (v == 0 || v == 1))
		snprintf(buf, len, "%s", v ? "yes" : "no");
	else
		snprintf(buf, len, "%.4g", v);
	return buf;
}

static int weighted_reward(const pb_plan *p)
{
	const char *mode = json_string_value(json_object_get(p->detail, "reward_mode"));
	return mode && !strcmp(mode, "weighted");
}

char *pb_plan_metric_text(const pb_plan *p, const char *name, double v, char *buf, size_t len)
{
	if (!strcmp(name, "objective") || !strcmp(name, "optimum")) {
		if (p && weighted_reward(p))
			snprintf(buf, len, "%.4g", v);
		else
			pb_fmt_time(v, buf, len);
		return buf;
	}
	return metric_text(name, v, buf, len);
}

static void title_block(exporter *x, Agraph_t *G)
{
	sbuf s;
	FILE *f = sb_open(&s);
	if (!f)
		return;
	sbuf t;
	FILE *tf = sb_open(&t);
	const pb_graph *g = x->g;
	const char *model = x->o.title;
	if (!model) {
		model = g->path ? strrchr(g->path, '/') : NULL;
		model = model ? model + 1 : g->path ? g->path : g->name ? g->name : "model";
	}
	char a[32], b[32];
	fputs("<TABLE BORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"1\">", f);
	fputs("<TR><TD ALIGN=\"LEFT\"><FONT POINT-SIZE=\"18\"><B>", f);
	html_text(f, model);
	fprintf(f, "</B></FONT></TD></TR><TR><TD ALIGN=\"LEFT\">%d nodes, %s MACs, %s params",
	        g->n_nodes, pb_fmt_si(g->total.macs, a, sizeof a),
	        pb_fmt_si(g->total.params, b, sizeof b));
	if (tf)
		fprintf(tf, "%s\n%d nodes, %s MACs\n", model, g->n_nodes, a);
	/* a plan that records its batch: the batch the shapes are at, and the
	 * plan's when it differs (plan.h) */
	long gb = pb_plan_graph_batch(g), pb = x->plan ? x->plan->model_batch : 0;
	long global =
	    x->plan ? (long)json_number_value(json_object_get(x->plan->detail, "batch")) : 0;
	if (gb > 0 && pb > 0) {
		fprintf(f, ", shapes at batch %ld", gb);
		if (global > gb && pb == gb)
			fprintf(f, " (a micro-batch of the plan's batch %ld)", global);
		if (pb > 0 && pb != gb)
			fprintf(f, " (<B>the plan was made at batch %ld</B>)", pb);
		if (tf)
			fprintf(tf, "shapes at batch %ld\n", gb);
	}
	fputs("</TD></TR><TR><TD ALIGN=\"LEFT\">hardware: ", f);
	if (x->hw) {
		html_text(f, x->hw->name);
		fputs(" (", f);
		html_text(f, x->hw->kind);
		fputs(")", f);
		if (tf)
			fprintf(tf, "hardware: %s (%s)\n", x->hw->name, x->hw->kind);
	} else if (x->plan && json_is_string(json_object_get(x->plan->detail, "layout"))) {
		/* export --plan without --layout: the layout the plan was made for */
		const char *ln = json_string_value(json_object_get(x->plan->detail, "layout"));
		const char *base = strrchr(ln, '/');
		html_text(f, base ? base + 1 : ln);
		fputs(" (named by the plan)", f);
		if (tf)
			fprintf(tf, "hardware: %s (named by the plan)\n", base ? base + 1 : ln);
	} else {
		fputs("none", f);
	}
	fputs(" &#183; plan: ", f);
	if (x->plan) {
		html_text(f, x->plan->kind);
		fputs(" by ", f);
		html_text(f, x->plan->method[0] ? x->plan->method : "?");
		/* an interleaved pipeline's groups are its stages' chunks */
		int stages = (int)pb_plan_metric(x->plan, "stages", 0);
		if (x->color_by == PB_COLOR_STAGE && stages > 0 && stages < x->n_groups)
			fprintf(f, ", %d stages in %d chunks", stages, x->n_groups);
		else
			fprintf(f, ", %d %s%s", x->n_groups, group_word(x->color_by),
			        x->n_groups == 1 ? "" : "s");
		if (tf)
			fprintf(tf, "plan: %s by %s\n", x->plan->kind, x->plan->method);
	} else {
		fputs("none", f);
	}
	fprintf(f, " &#183; colour: %s</TD></TR>", pb_color_by_name(x->color_by));
	if (x->plan) {
		const pb_plan *p = x->plan;
		int shown = 0;
		fputs("<TR><TD ALIGN=\"LEFT\">", f);
		static const char *times[] = {"max_time", "optimum", "step_time"};
		double gap = NAN;
		/* a plan with a label (util/proof_label.h) has its own row for it */
		int labelled =
		    pb_plan_has_metric(p, "optimal") && !pb_plan_has_metric(p, "optimum");
		if (!labelled && pb_plan_has_metric(p, "gap"))
			gap = pb_plan_metric(p, "gap", NAN);
		else if (!labelled && pb_plan_has_metric(p, "max_time") &&
		         pb_plan_has_metric(p, "optimum") && pb_plan_metric(p, "optimum", 0) > 0)
			gap =
			    pb_plan_metric(p, "max_time", 0) / pb_plan_metric(p, "optimum", 1) - 1;
		/* a partition's objective (and its optimum) is max(t) in seconds,
		 * unless the layout's reward is the weighted sum (no unit) */
		for (int i = 0; i < 3; i++)
			if (pb_plan_has_metric(p, times[i])) {
				pb_plan_metric_text(p, times[i], pb_plan_metric(p, times[i], NAN),
				                    a, sizeof a);
				fprintf(f, "%s%s = %s", shown++ ? " &#183; " : "",
				        i == 0 ? "max(t)" : times[i], a);
				if (tf)
					fprintf(tf, "%s = %s\n", times[i], a);
			}
		if (pb_plan_has_metric(p, "reward")) {
			fprintf(f, "%sreward = %.4g", shown++ ? " &#183; " : "",
			        pb_plan_metric(p, "reward", NAN));
			if (tf)
				fprintf(tf, "reward = %.4g\n", pb_plan_metric(p, "reward", NAN));
		}
		if (isfinite(gap)) {
			fprintf(f, "%sgap to optimum = %.2f%%", shown++ ? " &#183; " : "",
			        gap * 100);
			if (tf)
				fprintf(tf, "gap = %.2f%%\n", gap * 100);
		}
		/* every metric (a pipeline's pp, chunks and memory came after the
		 * 6th and were left out), seven to a row */
		for (int i = 0; i < p->n_metrics; i++) {
			const char *n = p->metric_names[i];
			if (!strcmp(n, "max_time") || !strcmp(n, "optimum") ||
			    !strcmp(n, "step_time") || !strcmp(n, "reward") || !strcmp(n, "gap") ||
			    (labelled && (!strcmp(n, "optimal") || !strcmp(n, "bound"))))
				continue;
			pb_plan_metric_text(p, n, p->metric_values[i], a, sizeof a);
			if (shown && shown % 7 == 0) {
				fputs("</TD></TR><TR><TD ALIGN=\"LEFT\">", f);
				shown = 0;
			}
			fprintf(f, "%s", shown++ ? " &#183; " : "");
			html_text(f, n);
			fputs(" = ", f);
			html_text(f, a);
			if (tf)
				fprintf(tf, "%s = %s\n", n, a);
		}
		if (!shown)
			fputs("(no metrics)", f);
		fputs("</TD></TR>", f);
		if (labelled) {
			/* "optimal" only when proven for the problem as posed, else
			 * the best found with its bound and gap (the plan's objective
			 * in seconds: a step time, a serial time, a fused time) */
			char lab[128];
			if (pb_plan_metric(p, "optimal", 0) == 1)
				snprintf(lab, sizeof lab, "optimal (proven)");
			else if (pb_plan_has_metric(p, "bound"))
				snprintf(lab, sizeof lab, "best found, bound %s, gap %.2f%%",
				         pb_fmt_time(pb_plan_metric(p, "bound", 0), a, sizeof a),
				         pb_plan_metric(p, "gap", 0) * 100);
			else
				snprintf(lab, sizeof lab, "best found, no bound");
			fputs("<TR><TD ALIGN=\"LEFT\"><B>", f);
			html_text(f, lab);
			fputs("</B></TD></TR>", f);
			if (tf)
				fprintf(tf, "%s\n", lab);
		}
	}
	if (x->col->depth != PB_COLLAPSE_NONE) {
		fprintf(f,
		        "<TR><TD ALIGN=\"LEFT\"><I>collapsed: %d nodes drawn as %d boxes "
		        "(module depth %d); hover a box for its contents</I></TD></TR>",
		        g->n_nodes - x->n_hidden_nodes, x->col->n_boxes - x->n_hidden,
		        x->col->depth);
	}
	if (x->n_hidden_nodes || x->n_const_edges)
		fprintf(f,
		        "<TR><TD ALIGN=\"LEFT\"><I>not drawn: %d node%s and %d edge%s that carry "
		        "only constants (weights held by Constant/Identity nodes, folded shape "
		        "math)</I></TD></TR>",
		        x->n_hidden_nodes, x->n_hidden_nodes == 1 ? "" : "s", x->n_const_edges,
		        x->n_const_edges == 1 ? "" : "s");
	fputs("</TABLE>", f);
	sb_close(&s);
	if (tf) {
		x->title_tip = sb_close(&t);
		size_t l = x->title_tip ? strlen(x->title_tip) : 0;
		if (l)
			x->title_tip[l - 1] = '\0';
	}
	if (s.buf)
		set_html(G, G, "label", s.buf);
	free(s.buf);
}

/* Branch mode: one row per kind (colour, groups, nodes fused) and the
 * meaning of the thick border. */
static void branch_legend(const exporter *x, FILE *f)
{
	const json_t *d = x->plan->detail;
	const json_t *kinds = json_object_get(d, "kinds"), *kg = json_object_get(d, "kind_groups");
	const json_t *kf = json_object_get(d, "kind_fused");
	char c[16];
	fputs("<TR><TD COLSPAN=\"6\"><B>branch group kinds</B></TD></TR>", f);
	for (size_t k = 0; k < json_array_size(kinds); k++) {
		fprintf(f,
		        "<TR><TD BGCOLOR=\"%s\" WIDTH=\"18\"> </TD><TD ALIGN=\"LEFT\" "
		        "COLSPAN=\"5\">",
		        pb_palette((int)k, c, sizeof c));
		const char *kn = json_string_value(json_array_get(kinds, k));
		html_text(f, kn ? kn : "?");
		long long ng = json_integer_value(json_array_get(kg, k));
		long long nf = json_integer_value(json_array_get(kf, k));
		fprintf(f, ": %lld group%s, %lld node%s fused</TD></TR>", ng, ng == 1 ? "" : "s",
		        nf, nf == 1 ? "" : "s");
	}
	fputs("<TR><TD BORDER=\"3\" WIDTH=\"18\"> </TD><TD ALIGN=\"LEFT\" COLSPAN=\"5\">"
	      "thick black border: node fused into a kernel</TD></TR>",
	      f);
}

static void legend(exporter *x, Agraph_t *G)
{
	Agraph_t *L = agsubg(G, "cluster_legend", 1);
	agsafeset(L, "label", "legend", "");
	agsafeset(L, "style", "rounded", "");
	agsafeset(L, "color", "#999999", "");
	agsafeset(L, "fillcolor", "", "");
	Agnode_t *n = agnode(L, "legend", 1);
	agsafeset(n, "shape", "plaintext", "");
	agsafeset(n, "style", "", "");
	agsafeset(n, "margin", "0", "");
	/* A monospaced face: Graphviz sizes the cells with its own estimate of
	 * the font (no font files read, gv.c), and a browser draws Helvetica
	 * with whatever sans face it has, up to 10% wider (DejaVu Sans: the
	 * name 'cores 8-15' ran 1 pt into the time column). Every monospaced
	 * face is 0.6 em a character, as Graphviz estimates Courier, and the
	 * figure columns line up. */
	agsafeset(n, "fontname", "Courier", "");
	sbuf s;
	FILE *f = sb_open(&s);
	if (!f)
		return;
	char c[16], a[32], b[32], d[32];
	fputs("<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"3\">", f);
	if (x->color_by == PB_COLOR_MACS) {
		fputs("<TR><TD COLSPAN=\"2\"><B>node fill: MACs</B></TD></TR>", f);
		for (int k = 0; k < 5; k++) {
			double lo = x->macs_lo + (x->macs_hi - x->macs_lo) * k / 5.0;
			double hi = x->macs_lo + (x->macs_hi - x->macs_lo) * (k + 1) / 5.0;
			fprintf(f,
			        "<TR><TD BGCOLOR=\"%s\" WIDTH=\"18\"> </TD><TD ALIGN=\"LEFT\">%s - "
			        "%s</TD></TR>",
			        pb_heat((k + 0.5) / 5.0, c, sizeof c),
			        pb_fmt_si(pow(10, lo), a, sizeof a),
			        pb_fmt_si(pow(10, hi), b, sizeof b));
		}
		fputs("<TR><TD BGCOLOR=\"#ffffff\" WIDTH=\"18\"> </TD><TD ALIGN=\"LEFT\">no "
		      "MACs</TD></TR>",
		      f);
	}
	if (x->color_by == PB_COLOR_BRANCH)
		branch_legend(x, f);
	if (x->n_groups > 0) {
		int cols = x->plan && x->plan->n_groups ? 6 : 2;
		fprintf(f, "<TR><TD COLSPAN=\"%d\"><B>%s%s</B></TD></TR>", cols,
		        group_word(x->color_by),
		        x->color_by == PB_COLOR_MACS ? " (cluster border)" : "s");
		if (cols == 6)
			fputs("<TR><TD></TD><TD>name</TD><TD>time</TD><TD>MACs</TD><TD>storage</TD>"
			      "<TD></TD></TR>",
			      f);
		for (int gi = 0; gi < x->n_groups; gi++) {
			char gl[128];
			fprintf(f, "<TR><TD BGCOLOR=\"%s\" WIDTH=\"18\"> </TD><TD ALIGN=\"LEFT\">",
			        pb_palette(gcol(x, gi), c, sizeof c));
			html_text(f, group_label(x, gi, gl, sizeof gl));
			if (cols == 6 && gi < x->plan->n_groups) {
				const pb_plan_group *g = &x->plan->groups[gi];
				fprintf(
				    f,
				    "</TD><TD ALIGN=\"RIGHT\">%s</TD><TD ALIGN=\"RIGHT\">%s</TD>"
				    "<TD ALIGN=\"RIGHT\">%s</TD><TD ALIGN=\"LEFT\">"
				    "%s%s%s%s%s</TD></TR>",
				    pb_fmt_time(g->time, a, sizeof a),
				    pb_fmt_si(g->macs, b, sizeof b),
				    pb_fmt_bytes(g->storage, d, sizeof d),
				    g->bottleneck || g->over_memory ? "<FONT COLOR=\"#d00000\">"
				                                    : "",
				    g->bottleneck ? "bottleneck" : "",
				    g->bottleneck && g->over_memory ? ", " : "",
				    g->over_memory ? "over memory" : "",
				    g->bottleneck || g->over_memory ? "</FONT>" : "");
			} else if (cols == 6) {
				fputs("</TD><TD></TD><TD></TD><TD></TD><TD></TD></TR>", f);
			} else {
				fputs("</TD></TR>", f);
			}
		}
	}
	fputs("<TR><TD BGCOLOR=\"#eeeeee\" WIDTH=\"18\"> </TD><TD ALIGN=\"LEFT\" COLSPAN=\"5\">"
	      "edge label: bytes crossing groups</TD></TR>",
	      f);
	fputs("</TABLE>", f);
	sb_close(&s);
	if (s.buf)
		set_html(G, n, "label", s.buf);
	free(s.buf);
}

static void declare_defaults(exporter *x, Agraph_t *G)
{
	agattr(G, AGRAPH, "rankdir", x->o.rankdir_lr ? "LR" : "TB");
	/* Rank the whole graph at once: the default ranks each cluster on its
	 * own and then reverses inter-cluster edges, which put later core
	 * groups beside (or above) earlier ones. */
	agattr(G, AGRAPH, "newrank", "true");
	agattr(G, AGRAPH, "fontname", "Helvetica");
	agattr(G, AGRAPH, "fontsize", "10");
	agattr(G, AGRAPH, "labelloc", "t");
	agattr(G, AGRAPH, "labeljust", "l");
	agattr(G, AGRAPH, "nodesep", "0.15");
	agattr(G, AGRAPH, "ranksep", "0.25");
	agattr(G, AGRAPH, "bgcolor", "white");
	agattr(G, AGRAPH, "pad", "0.2");
	agattr(G, AGRAPH, "penwidth", "1");
	agattr(G, AGRAPH, "style", "");
	agattr(G, AGRAPH, "color", "");
	agattr(G, AGRAPH, "fillcolor", "");
	agattr(G, AGRAPH, "fontcolor", "black");
	agattr(G, AGRAPH, "tooltip", "");
	agattr(G, AGRAPH, "label", "");
	if (x->col->n_boxes > 60 || x->col->depth != PB_COLLAPSE_NONE) {
		/* Bound dot's effort: fewer network-simplex iterations and
		 * crossing-minimisation passes (docs/export.md). */
		agattr(G, AGRAPH, "nslimit", "4");
		agattr(G, AGRAPH, "nslimit1", "4");
		agattr(G, AGRAPH, "mclimit", "0.5");
		agattr(G, AGRAPH, "searchsize", "10");
	}
	agattr(G, AGNODE, "shape", "box");
	agattr(G, AGNODE, "style", "rounded,filled");
	agattr(G, AGNODE, "fontname", "Helvetica");
	agattr(G, AGNODE, "fontsize", "8");
	agattr(G, AGNODE, "height", "0.2");
	agattr(G, AGNODE, "width", "0.3");
	agattr(G, AGNODE, "margin", "0.08,0.03");
	agattr(G, AGNODE, "fillcolor", "#eeeeee");
	agattr(G, AGNODE, "color", "#555555");
	agattr(G, AGNODE, "penwidth", "1");
	agattr(G, AGNODE, "peripheries", "1");
	agattr(G, AGNODE, "label", "");
	agattr(G, AGNODE, "tooltip", "");
	agattr(G, AGEDGE, "color", "#888888");
	agattr(G, AGEDGE, "fontname", "Helvetica");
	agattr(G, AGEDGE, "fontsize", "7");
	agattr(G, AGEDGE, "fontcolor", "#a01010");
	agattr(G, AGEDGE, "arrowsize", "0.5");
	agattr(G, AGEDGE, "penwidth", "0.8");
	/* xlabel, not label: labels make dot insert label nodes, and flat
	 * labelled edges in clustered graphs crash Graphviz 2.43 (double free
	 * in flat_edges); xlabels are placed after the layout. */
	agattr(G, AGEDGE, "xlabel", "");
	agattr(G, AGRAPH, "forcelabels", "true");
	agattr(G, AGEDGE, "tooltip", "");
}

/* Builds the tooltip attribute value (escString) from details text. */
static char *tooltip_str(const char *details)
{
	sbuf s;
	FILE *f = sb_open(&s);
	if (!f)
		return NULL;
	for (const char *p = details; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		char *line = strndup(p, l);
		gv_text(f, line);
		free(line);
		if (nl)
			fputs("\\n", f);
		p = nl ? nl + 1 : p + l;
	}
	return sb_close(&s);
}

static int build_graph(exporter *x, Agraph_t *G, pb_svg_stats *st, pb_error *err)
{
	declare_defaults(x, G);
	char name[64], c[16], d[16];
	Agraph_t **cl = calloc((size_t)(x->n_groups ? x->n_groups : 1), sizeof *cl);
	Agnode_t **nodes = calloc((size_t)(x->col->n_boxes ? x->col->n_boxes : 1), sizeof *nodes);
	if (!cl || !nodes) {
		free(cl);
		free(nodes);
		return pb_err(err, PB_ENOMEM, "export: out of memory");
	}
	/* Groups with nothing drawn (only constants) get no cluster: the
	 * legend still lists them. */
	unsigned char *drawn = calloc((size_t)x->n_groups + 1, 1);
	if (!drawn) {
		free(cl);
		free(nodes);
		return pb_err(err, PB_ENOMEM, "export: out of memory");
	}
	for (int b = 0; b < x->col->n_boxes; b++) {
		int gi = group_of_box(x, b);
		if (!x->box_hidden[b] && gi >= 0 && gi < x->n_groups)
			drawn[gi] = 1;
	}
	for (int gi = 0; gi < x->n_groups; gi++) {
		if (!drawn[gi])
			continue;
		snprintf(name, sizeof name, "cluster_g%d", gi);
		cl[gi] = agsubg(G, name, 1);
		char gl[128];
		group_label(x, gi, gl, sizeof gl);
		sbuf s;
		FILE *f = sb_open(&s);
		if (!f)
			continue;
		gv_text(f, gl);
		const pb_plan_group *pg =
		    x->plan && gi < x->plan->n_groups ? &x->plan->groups[gi] : NULL;
		if (pg) {
			char a[32];
			fprintf(f, " \xc2\xb7 %s", pb_fmt_time(pg->time, a, sizeof a));
			if (pg->bottleneck)
				fputs(" \xc2\xb7 BOTTLENECK", f);
			if (pg->over_memory)
				fputs(" \xc2\xb7 OVER MEMORY", f);
		}
		sb_close(&s);
		agset(cl[gi], "label", s.buf ? s.buf : "");
		free(s.buf);
		int tint = x->color_by != PB_COLOR_MACS;
		agset(cl[gi], "style", tint ? "rounded,filled" : "rounded");
		pb_palette(gcol(x, gi), c, sizeof c);
		if (tint) {
			/* A light tint of the group colour as the cluster's background. */
			unsigned v = (unsigned)strtoul(c + 1, NULL, 16);
			unsigned r = (v >> 16) + (255 - (v >> 16)) * 3 / 4;
			unsigned g = ((v >> 8) & 255) + (255 - ((v >> 8) & 255)) * 3 / 4;
			unsigned b = (v & 255) + (255 - (v & 255)) * 3 / 4;
			snprintf(d, sizeof d, "#%02x%02x%02x", r, g, b);
			agset(cl[gi], "fillcolor", d);
		}
		if (pg && pg->bottleneck) {
			agset(cl[gi], "color", "#d00000");
			agset(cl[gi], "penwidth", "3");
			agset(cl[gi], "fontcolor", "#d00000");
		} else {
			agset(cl[gi], "color", pb_palette_dark(gcol(x, gi), c, sizeof c));
			agset(cl[gi], "penwidth", "1.5");
		}
		if (pg && pg->over_memory) {
			agset(cl[gi], "style", tint ? "rounded,filled,dashed" : "rounded,dashed");
			agset(cl[gi], "fontcolor", "#d00000");
		}
		st->n_clusters++;
	}
	for (int b = 0; b < x->col->n_boxes; b++) {
		if (x->box_hidden[b])
			continue;
		int gi = group_of_box(x, b);
		snprintf(name, sizeof name, "b%d", b);
		Agraph_t *parent = gi >= 0 && gi < x->n_groups && cl[gi] ? cl[gi] : G;
		Agnode_t *n = agnode(parent, name, 1);
		nodes[b] = n;
		char *lab = box_label(x, b);
		agset(n, "label", lab ? lab : "");
		free(lab);
		char *tip = tooltip_str(x->box_tip[b]);
		agset(n, "tooltip", tip ? tip : "");
		free(tip);
		if (x->color_by == PB_COLOR_MACS) {
			pb_cost cs;
			box_sums(x, b, &cs);
			if (cs.macs > 0) {
				double t = x->macs_hi > x->macs_lo ? (log10(cs.macs) - x->macs_lo) /
				                                         (x->macs_hi - x->macs_lo)
				                                   : 1.0;
				agset(n, "fillcolor", pb_heat(t, c, sizeof c));
				if (t > 0.75)
					agsafeset(n, "fontcolor", "white", "black");
			} else {
				agset(n, "fillcolor", "#ffffff");
			}
		} else if (gi >= 0) {
			agset(n, "fillcolor", pb_palette(gcol(x, gi), c, sizeof c));
			agset(n, "color", pb_palette_dark(gcol(x, gi), c, sizeof c));
		}
		if (box_fused(x, b)) {
			agset(n, "color", "#000000");
			agset(n, "penwidth", "2.5");
			st->n_fused_boxes++;
		}
		if (pb_collapse_size(x->col, b) > 1) {
			agset(n, "peripheries", "2");
			agset(n, "style", "filled");
		}
	}
	int n_drawn = 0;
	for (int i = 0; i < x->n_edges; i++) {
		const box_edge *e = &x->edges[i];
		if (!nodes[e->from] || !nodes[e->to])
			continue;
		if (e->is_static) {
			/* Constants (weights held by Constant/Identity nodes,
			 * folded shape math) feed blocks all over the graph; as
			 * edges they only hide the data flow. */
			st->n_static_edges++;
			continue;
		}
		n_drawn++;
		Agedge_t *ed = agedge(G, nodes[e->from], nodes[e->to], NULL, 1);
		int gf = group_of_box(x, e->from), gt = group_of_box(x, e->to);
		char a[32];
		pb_fmt_bytes(e->bytes, a, sizeof a);
		if (gf != gt && gf >= 0 && gt >= 0) {
			agset(ed, "xlabel", a);
			agset(ed, "color", "#a01010");
			agset(ed, "penwidth", "1.4");
			st->n_cross_edges++;
		}
		agset(ed, "tooltip", a);
	}
	/* A box with no data input (only constants, or none) would float to
	 * the top rank and stretch its cluster over the whole drawing: an
	 * invisible edge from the box before it in topological order keeps it
	 * in place. Boxes are intervals of that order, so no cycle arises. */
	unsigned char *fed = calloc((size_t)x->col->n_boxes + 1, 1);
	if (fed) {
		for (int i = 0; i < x->n_edges; i++)
			if (!x->edges[i].is_static)
				fed[x->edges[i].to] = 1;
		for (int b = 0, prev = -1; b < x->col->n_boxes; b++) {
			if (!nodes[b])
				continue;
			if (!fed[b] && prev >= 0) {
				Agedge_t *ed = agedge(G, nodes[prev], nodes[b], "order", 1);
				agset(ed, "style", "invis");
			}
			prev = b;
		}
		free(fed);
	}
	st->n_edges = n_drawn;
	st->n_hidden_boxes = x->n_hidden;
	st->n_boxes = x->col->n_boxes - x->n_hidden;
	title_block(x, G);
	legend(x, G);
	free(cl);
	free(drawn);
	free(nodes);
	return PB_OK;
}

/* ---- SVG post-processing ---- */

static const char *edge_text(exporter *x, int from, int to, char *buf, size_t len)
{
	box_edge key = {from, to, 0, 0};
	box_edge *e = bsearch(&key, x->edges, (size_t)x->n_edges, sizeof key, cmp_edge);
	char a[32];
	const char *fn = x->g->nodes[x->col->start[from + 1] - 1].name;
	const char *tn = x->g->nodes[x->col->start[to]].name;
	snprintf(buf, len, "%s -> %s: %s%s", fn, tn, e ? pb_fmt_bytes(e->bytes, a, sizeof a) : "?",
	         e && e->is_static ? " (constants)" : "");
	return buf;
}

static void postprocess(exporter *x, const char *in, size_t len, FILE *out)
{
	const char *p = in, *end = in + len;
	while (p < end) {
		const char *cm = strstr(p, "<!--");
		const char *ti = strstr(p, "<title>");
		const char *next = cm && (!ti || cm < ti) ? cm : ti;
		if (!next) {
			fwrite(p, 1, (size_t)(end - p), out);
			break;
		}
		fwrite(p, 1, (size_t)(next - p), out);
		if (next == cm) {
			const char *ce = strstr(cm, "-->");
			p = ce ? ce + 3 : end;
			if (p < end && *p == '\n')
				p++;
			continue;
		}
		const char *body = ti + 7, *te = strstr(body, "</title>");
		if (!te) {
			fwrite(ti, 1, (size_t)(end - ti), out);
			break;
		}
		int a, b, used = 0;
		size_t bl = (size_t)(te - body);
		char buf[2048];
		const char *text = NULL;
		char tmp[256];
		snprintf(tmp, sizeof tmp, "%.*s", (int)(bl < 255 ? bl : 255), body);
		if (sscanf(tmp, "b%d&#45;&gt;b%d%n", &a, &b, &used) == 2 && (size_t)used == bl &&
		    a >= 0 && b >= 0 && a < x->col->n_boxes && b < x->col->n_boxes)
			text = edge_text(x, a, b, buf, sizeof buf);
		else if (sscanf(tmp, "b%d%n", &a, &used) == 1 && (size_t)used == bl && a >= 0 &&
		         a < x->col->n_boxes)
			text = x->box_tip[a];
		else if (sscanf(tmp, "cluster_g%d%n", &a, &used) == 1 && (size_t)used == bl &&
		         a >= 0 && a < x->n_groups)
			text = x->group_tip[a];
		else if (strcmp(tmp, "partbench") == 0)
			text = x->title_tip;
		fputs("<title>", out);
		if (text)
			pb_xml_escape(out, text);
		else
			fwrite(body, 1, bl, out);
		fputs("</title>", out);
		p = te + 8;
	}
}

/* ---- entry points ---- */

static void exporter_free(exporter *x)
{
	if (x->box_tip)
		for (int b = 0; b < x->col->n_boxes; b++)
			free(x->box_tip[b]);
	free(x->box_tip);
	if (x->group_tip)
		for (int gi = 0; gi < x->n_groups; gi++)
			free(x->group_tip[gi]);
	free(x->group_tip);
	free(x->title_tip);
	free(x->edges);
	free(x->box_hidden);
	free(x->group_color);
	free(x->node_fused);
	pb_collapse_free(x->col);
}

static int check_plan(const pb_graph *g, const pb_plan *p, int *n_groups, pb_error *err)
{
	*n_groups = 0;
	if (!p)
		return PB_OK;
	if (p->n_nodes != g->n_nodes)
		return pb_err(
		    err, PB_EINPUT,
		    "export: the plan assigns %d nodes but the model has %d (plan made for "
		    "another model?)",
		    p->n_nodes, g->n_nodes);
	int mx = p->n_groups;
	for (int i = 0; i < p->n_nodes; i++) {
		if (p->group[i] < -1 || (p->n_groups && p->group[i] >= p->n_groups))
			return pb_err(err, PB_EINPUT,
			              "export: plan assignment[%d] = %d names no group", i,
			              p->group[i]);
		if (p->group[i] + 1 > mx)
			mx = p->group[i] + 1;
	}
	if (mx > 100000)
		return pb_err(err, PB_EINPUT, "export: the plan has %d groups (too many to draw)",
		              mx);
	*n_groups = mx;
	return PB_OK;
}

int pb_svg_export_data(const pb_graph *g, const pb_plan *plan, const pb_hw *hw,
                       const pb_svg_opts *opts, char **svg, size_t *len, pb_svg_stats *stats,
                       pb_error *err)
{
	*svg = NULL;
	*len = 0;
	pb_svg_stats stbuf = {0};
	pb_svg_stats *st = stats ? stats : &stbuf;
	memset(st, 0, sizeof *st);
	exporter x = {.g = g, .plan = plan, .hw = hw};
	if (opts)
		x.o = *opts;
	if (x.o.max_boxes <= 0)
		x.o.max_boxes = PB_SVG_DEFAULT_BOXES;
	int rc = check_plan(g, plan, &x.n_groups, err);
	if (rc)
		return rc;
	x.group = plan ? plan->group : NULL;
	x.color_by = x.o.color_by == PB_COLOR_AUTO ? auto_color(plan) : x.o.color_by;
	GVC_t *gvc = pb_gv_context(err);
	if (!gvc)
		return PB_EINTERNAL;
	int budget = x.o.collapse == PB_SVG_COLLAPSE_NEVER ? 0 : x.o.max_boxes;
	rc = pb_collapse_compute(g, x.group, budget, x.o.collapse == PB_SVG_COLLAPSE_ALWAYS, &x.col,
	                         err);
	if (rc)
		return rc;
	if (x.color_by == PB_COLOR_BRANCH && (rc = branch_setup(&x, err)) != PB_OK) {
		exporter_free(&x);
		return rc;
	}
	if ((rc = build_edges(&x, err)) != PB_OK) {
		exporter_free(&x);
		return rc;
	}
	/* MACs range (log10) over boxes with MACs, for the heat colours. */
	x.macs_lo = INFINITY;
	x.macs_hi = -INFINITY;
	x.box_tip = calloc((size_t)x.col->n_boxes + 1, sizeof *x.box_tip);
	x.group_tip = calloc((size_t)x.n_groups + 1, sizeof *x.group_tip);
	if (!x.box_tip || !x.group_tip) {
		exporter_free(&x);
		return pb_err(err, PB_ENOMEM, "export: out of memory");
	}
	for (int b = 0; b < x.col->n_boxes; b++) {
		pb_cost c;
		box_sums(&x, b, &c);
		if (c.macs > 0) {
			x.macs_lo = fmin(x.macs_lo, log10(c.macs));
			x.macs_hi = fmax(x.macs_hi, log10(c.macs));
		}
		x.box_tip[b] = box_details(&x, b);
	}
	if (!isfinite(x.macs_lo))
		x.macs_lo = x.macs_hi = 0;
	for (int gi = 0; gi < x.n_groups; gi++)
		x.group_tip[gi] = group_details(&x, gi);
	st->n_nodes = g->n_nodes;
	st->depth = x.col->depth;

	pb_gv_messages_clear();
	Agraph_t *G = pb_gv_open("partbench");
	if (!G) {
		exporter_free(&x);
		return pb_gv_fail(err, "export");
	}
	rc = build_graph(&x, G, st, err);
	if (rc) {
		agclose(G);
		exporter_free(&x);
		return rc;
	}
	double t0 = now_s();
	if (gvLayout(gvc, G, "dot") != 0) {
		agclose(G);
		exporter_free(&x);
		return pb_gv_fail(err, "export: dot layout");
	}
	double t1 = now_s();
	if (agerrors() >= AGERR) {
		/* e.g. a malformed HTML label: Graphviz drops it and goes on. */
		gvFreeLayout(gvc, G);
		agclose(G);
		exporter_free(&x);
		return pb_gv_fail(err, "export: dot layout");
	}
	char *data = NULL;
	unsigned int dlen = 0;
	int rrc = gvRenderData(gvc, G, "svg", &data, &dlen);
	st->layout_s = t1 - t0;
	st->render_s = now_s() - t1;
	gvFreeLayout(gvc, G);
	agclose(G);
	if (rrc != 0 || !data) {
		if (data)
			gvFreeRenderData(data);
		exporter_free(&x);
		return pb_gv_fail(err, "export: svg rendering");
	}
	sbuf s;
	FILE *f = sb_open(&s);
	if (f)
		postprocess(&x, data, dlen, f);
	sb_close(&s);
	gvFreeRenderData(data);
	exporter_free(&x);
	if (!s.buf)
		return pb_err(err, PB_ENOMEM, "export: out of memory");
	*svg = s.buf;
	*len = s.len;
	return PB_OK;
}

int pb_svg_export_file(const pb_graph *g, const pb_plan *plan, const pb_hw *hw,
                       const pb_svg_opts *opts, const char *path, pb_svg_stats *stats,
                       pb_error *err)
{
	char *svg;
	size_t len;
	int rc = pb_svg_export_data(g, plan, hw, opts, &svg, &len, stats, err);
	if (rc)
		return rc;
	rc = pb_write_file_atomic(path, svg, len, err);
	free(svg);
	return rc;
}
