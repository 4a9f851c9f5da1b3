/*
 * dot_load.c — Graphviz DOT graphs (.dot/.gv) as partbench Graphs, via cgraph.
 *
 * This lets people feed hand-made or foreign graphs. The file is parsed by
 * cgraph (agread on the whole buffer: exactly one graph, nothing after it);
 * the mapping to a pb_graph is:
 *
 *  - every DOT node becomes one graph node named after it, with op = the `op`
 *    attribute ("Op" when absent), producing one tensor with the node's name;
 *    optional `shape` ("1x64x56x56", "1,64,56,56", "?x768", "scalar") and
 *    `dtype` ("float32", "float16", "int8", ...; float32 by default) describe
 *    that tensor;
 *  - `macs`, `flops`, `params`, `param_bytes`, `out_bytes` are fixed costs
 *    (pb_builder_node_cost); numbers may carry a K/M/G/T suffix (powers of
 *    1000). Unstated fields are inferred (left NAN), except out_bytes: without
 *    `out_bytes` it is the bytes of the node's `shape`, else the largest stated
 *    `bytes` of its out-edges, else 0 — so it never depends on the edge tensors
 *    described next;
 *  - an edge a -> b means b consumes a's tensor. An edge with a `bytes`
 *    attribute instead gets a tensor of its own, named "a->b" (suffixed "#2",
 *    "#3", ... when that name is taken), produced by a and consumed by b, with
 *    dtype uint8 and shape [bytes]. b then does not read a's main tensor
 *    through that edge, so pb_graph_edge_bytes(a, b) is exactly the stated
 *    bytes (summed over parallel edges), while edges without `bytes` carry
 *    a's main tensor (its shape's bytes, or a's out_bytes when the shape is
 *    unknown). Edge tensors are ordered after the node's main tensor;
 *  - other node attributes with a non-empty value that are not Graphviz
 *    drawing attributes (label, color, ...) are kept as node attributes:
 *    INT when the value is an integer, FLOAT when a number, else STRING.
 *    A `shape` made of letters only (box, ellipse) is Graphviz's node shape and
 *    is ignored.
 *
 * Shape inference is not run: DOT graphs carry no weights or operator
 * attributes to infer from, so shapes are exactly what the file states.
 *
 * Errors: cgraph reports through a process-global callback (agseterrf); it is
 * pointed at a buffer for the duration of the parse and restored afterwards,
 * so nothing reaches stderr or the curses screen. Undirected graphs, cycles
 * (pb_builder_finish names a node on the cycle), malformed, negative or
 * absurd (> 1e18) numbers, bad shapes, several graphs in one file and text
 * after the graph give a PB_EINPUT error naming the file and the node or line.
 */
#include <errno.h>
#include <graphviz/cgraph.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/dot_load.h"
#include "util/read_file.h"
#include "util/strmap.h"

/* ---------------------------------------------------------- cgraph errors */

static char dot_errbuf[1024];

static int dot_errf(char *msg)
{
	size_t have = strlen(dot_errbuf);
	if (have + 1 < sizeof dot_errbuf)
		snprintf(dot_errbuf + have, sizeof dot_errbuf - have, "%s", msg);
	return 0;
}

/* The collected cgraph messages as one line: the first error, then the first
 * warning (which often explains it, e.g. a number split in two by a suffix),
 * without cgraph's "Error: "/"Warning: " tags. Writes into out. */
static const char *dot_errmsg(char *out, size_t len)
{
	const char *error = NULL, *warning = NULL;
	size_t elen = 0, wlen = 0;
	for (const char *p = dot_errbuf; *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		if (!error && strncmp(p, "Error: ", 7) == 0) {
			error = p + 7;
			elen = l - 7;
		} else if (!warning && strncmp(p, "Warning: ", 9) == 0) {
			warning = p + 9;
			wlen = l - 9;
		}
		p += l + (nl ? 1 : 0);
	}
	if (!error && !warning)
		snprintf(out, len, "syntax error");
	else if (error && warning)
		snprintf(out, len, "%.*s (%.*s)", (int)elen, error, (int)wlen, warning);
	else if (error)
		snprintf(out, len, "%.*s", (int)elen, error);
	else
		snprintf(out, len, "%.*s", (int)wlen, warning);
	return out;
}

/* ---------------------------------------------------------- attribute parsing */

static const char *attr_of(void *obj, const char *name)
{
	const char *v = agget(obj, (char *)name);
	return (v && *v) ? v : NULL;
}

/* Parses a non-negative finite number with an optional K/M/G/T suffix.
 * Returns 0 on success. */
static int parse_amount(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno == ERANGE)
		return -1;
	while (*end == ' ')
		end++;
	double mul = 1;
	switch (*end) {
	case 'k':
	case 'K':
		mul = 1e3;
		end++;
		break;
	case 'M':
		mul = 1e6;
		end++;
		break;
	case 'G':
		mul = 1e9;
		end++;
		break;
	case 'T':
		mul = 1e12;
		end++;
		break;
	default:
		break;
	}
	while (*end == ' ')
		end++;
	/* 1e18 (an exa-MAC) is beyond any real layer; larger values are typos
	 * and would not print in the tables. */
	if (*end || !isfinite(v) || v < 0 || !(v * mul <= 1e18))
		return -1;
	*out = v * mul;
	return 0;
}

static int node_amount(Agnode_t *n, const char *attr, const char *file, double *out, pb_error *err)
{
	const char *v = attr_of(n, attr);
	*out = NAN;
	if (!v)
		return PB_OK;
	if (parse_amount(v, out) != 0)
		return pb_err(
		    err, PB_EINPUT,
		    "%s: node '%s': %s=\"%s\" is not a non-negative number (at most 1e18)", file,
		    agnameof(n), attr, v);
	return PB_OK;
}

static int only_letters(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
			return 0;
	return 1;
}

/* "1x64x56x56", "1,64,56,56", "?x768", "[1, 3]", "scalar". */
static int parse_shape(const char *s, int *rank, int64_t *dims)
{
	*rank = 0;
	if (strcmp(s, "scalar") == 0)
		return 0;
	while (*s == ' ' || *s == '[' || *s == '(')
		s++;
	while (*s) {
		if (*rank >= PB_MAX_RANK)
			return -1;
		if (*s == '?') {
			dims[(*rank)++] = PB_DIM_UNKNOWN;
			s++;
		} else {
			char *end;
			errno = 0;
			long long d = strtoll(s, &end, 10);
			if (end == s || errno == ERANGE || d < 0 || *s == '-' || *s == '+')
				return -1;
			dims[(*rank)++] = d;
			s = end;
		}
		while (*s == ' ')
			s++;
		if (*s == 'x' || *s == 'X' || *s == ',' || *s == '*') {
			s++;
			while (*s == ' ')
				s++;
			if (!*s || *s == ']' || *s == ')')
				return -1;
			continue;
		}
		while (*s == ' ' || *s == ']' || *s == ')')
			s++;
		if (*s)
			return -1;
	}
	/* numel must stay representable */
	double numel = 1;
	for (int i = 0; i < *rank; i++)
		if (dims[i] >= 0)
			numel *= (double)dims[i];
	return numel > 9e15 ? -1 : 0;
}

static int parse_dtype(const char *s)
{
	static const struct {
		const char *name;
		int dt;
	} alias[] = {{"float", PB_DT_FLOAT},   {"fp32", PB_DT_FLOAT},    {"f32", PB_DT_FLOAT},
	             {"half", PB_DT_FLOAT16},  {"fp16", PB_DT_FLOAT16},  {"f16", PB_DT_FLOAT16},
	             {"bf16", PB_DT_BFLOAT16}, {"double", PB_DT_DOUBLE}, {"fp64", PB_DT_DOUBLE},
	             {"f64", PB_DT_DOUBLE}};
	for (int d = 1; d <= PB_DT_BFLOAT16; d++)
		if (strcmp(s, pb_dtype_name(d)) == 0)
			return d;
	for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
		if (strcmp(s, alias[i].name) == 0)
			return alias[i].dt;
	return 0;
}

/* Attributes read by the loader itself or only meaningful to Graphviz. */
static int reserved_attr(const char *name)
{
	static const char *const skip[] = {
	    "op",           "macs",       "flops",         "params",
	    "param_bytes",  "out_bytes",  "shape",         "dtype",
	    "label",        "xlabel",     "color",         "fillcolor",
	    "fontcolor",    "fontname",   "fontsize",      "style",
	    "pos",          "width",      "height",        "tooltip",
	    "penwidth",     "group",      "URL",           "href",
	    "id",           "class",      "margin",        "peripheries",
	    "orientation",  "fixedsize",  "image",         "labelloc",
	    "ordering",     "rank",       "sides",         "skew",
	    "distortion",   "regular",    "gradientangle", "layer",
	    "nojustify",    "z",          "vertices",      "rects",
	    "area",         "root",       "sortv",         "showboxes",
	    "samplepoints", "imagescale", "imagepos",      "target",
	    "comment",      NULL};
	for (int i = 0; skip[i]; i++)
		if (strcmp(name, skip[i]) == 0)
			return 1;
	return 0;
}

static void add_extra_attr(pb_builder *b, int nid, const char *name, const char *val)
{
	pb_attr a = {0};
	a.name = (char *)name;
	char *end;
	errno = 0;
	long long iv = strtoll(val, &end, 10);
	if (end != val && !*end && errno == 0) {
		a.type = PB_ATTR_INT;
		a.i = iv;
		a.f = (double)iv;
	} else {
		double fv = strtod(val, &end);
		if (end != val && !*end && isfinite(fv)) {
			a.type = PB_ATTR_FLOAT;
			a.f = fv;
		} else {
			a.type = PB_ATTR_STRING;
			a.s = (char *)val;
		}
	}
	pb_builder_attr(b, nid, &a);
}

/* ---------------------------------------------------------- conversion */

typedef struct {
	char **name;   /* edge tensor name by AGSEQ(e), NULL = carries the main tensor */
	double *bytes; /* stated bytes by AGSEQ(e) */
	size_t n;
} edge_table;

static void edge_table_free(edge_table *t)
{
	for (size_t i = 0; t->name && i < t->n; i++)
		free(t->name[i]);
	free(t->name);
	free(t->bytes);
}

/* Gives every edge with a `bytes` attribute a unique tensor name. */
static int edges_prepare(Agraph_t *G, const char *file, edge_table *t, pb_error *err)
{
	size_t maxseq = 0;
	for (Agnode_t *n = agfstnode(G); n; n = agnxtnode(G, n))
		for (Agedge_t *e = agfstout(G, n); e; e = agnxtout(G, e))
			if ((size_t)AGSEQ(e) > maxseq)
				maxseq = (size_t)AGSEQ(e);
	t->n = maxseq + 1;
	t->name = calloc(t->n, sizeof *t->name);
	t->bytes = calloc(t->n, sizeof *t->bytes);
	pb_strmap *taken = pb_strmap_new(64);
	if (!t->name || !t->bytes || !taken) {
		pb_strmap_free(taken);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", file);
	}
	for (Agnode_t *n = agfstnode(G); n; n = agnxtnode(G, n))
		pb_strmap_put(taken, agnameof(n), 1);
	int rc = PB_OK;
	for (Agnode_t *n = agfstnode(G); n && rc == PB_OK; n = agnxtnode(G, n))
		for (Agedge_t *e = agfstout(G, n); e && rc == PB_OK; e = agnxtout(G, e)) {
			const char *v = attr_of(e, "bytes");
			if (!v)
				continue;
			double bytes;
			const char *tail = agnameof(agtail(e)), *head = agnameof(aghead(e));
			if (parse_amount(v, &bytes) != 0 || bytes != floor(bytes) || bytes > 9e15) {
				rc = pb_err(
				    err, PB_EINPUT,
				    "%s: edge '%s' -> '%s': bytes=\"%s\" is not a non-negative "
				    "whole number",
				    file, tail, head, v);
				break;
			}
			size_t len = strlen(tail) + strlen(head) + 32;
			char *name = malloc(len);
			if (!name) {
				rc = pb_err(err, PB_ENOMEM, "%s: out of memory", file);
				break;
			}
			snprintf(name, len, "%s->%s", tail, head);
			for (int k = 2; pb_strmap_get(taken, name, 0); k++)
				snprintf(name, len, "%s->%s#%d", tail, head, k);
			pb_strmap_put(taken, name, 1);
			t->name[AGSEQ(e)] = name;
			t->bytes[AGSEQ(e)] = bytes;
		}
	pb_strmap_free(taken);
	return rc;
}

static int dot_convert(Agraph_t *G, const char *file, const pb_load_opts *opts, pb_graph **out,
                       pb_error *err)
{
	if (!agisdirected(G))
		return pb_err(err, PB_EINPUT,
		              "%s: the graph is undirected ('graph'); partbench needs a directed "
		              "graph ('digraph' with edges a -> b)",
		              file);
	edge_table et = {0};
	int rc = edges_prepare(G, file, &et, err);
	if (rc != PB_OK) {
		edge_table_free(&et);
		return rc;
	}
	pb_builder *b = pb_builder_new(file, "dot");
	if (!b) {
		edge_table_free(&et);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", file);
	}
	const char *gname = agnameof(G);
	pb_builder_name(b, (gname && gname[0] != '%') ? gname : "");

	int cap = 16;
	const char **ins = malloc((size_t)cap * sizeof *ins);
	const char **outs = malloc((size_t)cap * sizeof *outs);
	if (!ins || !outs)
		rc = pb_err(err, PB_ENOMEM, "%s: out of memory", file);
	for (Agnode_t *n = agfstnode(G); n && rc == PB_OK; n = agnxtnode(G, n)) {
		const char *name = agnameof(n);
		/* inputs: one per in-edge; outputs: main tensor + edge tensors */
		int n_in = 0, n_out = 0, need = 1;
		for (Agedge_t *e = agfstin(G, n); e; e = agnxtin(G, e))
			need++;
		for (Agedge_t *e = agfstout(G, n); e; e = agnxtout(G, e))
			need++;
		if (need > cap) {
			cap = need;
			const char **ni = realloc(ins, (size_t)cap * sizeof *ins);
			if (ni)
				ins = ni;
			const char **no = realloc(outs, (size_t)cap * sizeof *outs);
			if (no)
				outs = no;
			if (!ni || !no) {
				rc = pb_err(err, PB_ENOMEM, "%s: out of memory", file);
				break;
			}
		}
		double max_edge_bytes = 0;
		outs[n_out++] = name;
		for (Agedge_t *e = agfstout(G, n); e; e = agnxtout(G, e))
			if (et.name[AGSEQ(e)]) {
				outs[n_out++] = et.name[AGSEQ(e)];
				if (et.bytes[AGSEQ(e)] > max_edge_bytes)
					max_edge_bytes = et.bytes[AGSEQ(e)];
			}
		for (Agedge_t *e = agfstin(G, n); e; e = agnxtin(G, e))
			ins[n_in++] = et.name[AGSEQ(e)] ? et.name[AGSEQ(e)] : agnameof(agtail(e));

		const char *op = attr_of(n, "op");
		int nid = pb_builder_node(b, name, op ? op : "Op", "", ins, n_in, outs, n_out);

		pb_cost c = {NAN, NAN, NAN, NAN, NAN, NAN};
		if ((rc = node_amount(n, "macs", file, &c.macs, err)) ||
		    (rc = node_amount(n, "flops", file, &c.flops, err)) ||
		    (rc = node_amount(n, "params", file, &c.params, err)) ||
		    (rc = node_amount(n, "param_bytes", file, &c.param_bytes, err)) ||
		    (rc = node_amount(n, "out_bytes", file, &c.out_bytes, err)))
			break;

		int dtype = PB_DT_FLOAT;
		const char *dt = attr_of(n, "dtype");
		if (dt && !(dtype = parse_dtype(dt))) {
			rc = pb_err(
			    err, PB_EINPUT,
			    "%s: node '%s': dtype=\"%s\" is not a known element type "
			    "(float32, float16, bfloat16, float64, int8, uint8, int32, int64, "
			    "bool, ...)",
			    file, name, dt);
			break;
		}
		const char *sh = attr_of(n, "shape");
		int tid = pb_builder_tensor(b, name);
		if (sh && !(only_letters(sh) && strcmp(sh, "scalar") != 0)) {
			int rank;
			int64_t dims[PB_MAX_RANK];
			if (parse_shape(sh, &rank, dims) != 0) {
				rc = pb_err(err, PB_EINPUT,
				            "%s: node '%s': shape=\"%s\" is not a shape like "
				            "\"1x64x56x56\" (at most %d non-negative dims, '?' for "
				            "unknown)",
				            file, name, sh, PB_MAX_RANK);
				break;
			}
			pb_builder_set_shape(b, tid, dtype, rank, dims, NULL);
		} else {
			pb_builder_set_shape(b, tid, dtype, -1, NULL, NULL);
		}
		if (isnan(c.out_bytes)) {
			int64_t numel = pb_tensor_numel(pb_builder_tensor_ptr(b, tid));
			c.out_bytes = numel >= 0 ? pb_tensor_bytes(pb_builder_tensor_ptr(b, tid))
			                         : max_edge_bytes;
		}
		pb_builder_node_cost(b, nid, &c);

		for (Agedge_t *e = agfstout(G, n); e; e = agnxtout(G, e)) {
			const char *en = et.name[AGSEQ(e)];
			if (en) {
				int64_t d = (int64_t)et.bytes[AGSEQ(e)];
				pb_builder_set_shape(b, pb_builder_tensor(b, en), PB_DT_UINT8, 1,
				                     &d, NULL);
			}
		}
		for (Agsym_t *sym = agnxtattr(G, AGNODE, NULL); sym;
		     sym = agnxtattr(G, AGNODE, sym)) {
			const char *v = agxget(n, sym);
			if (v && *v && !reserved_attr(sym->name))
				add_extra_attr(b, nid, sym->name, v);
		}
	}
	free(ins);
	free(outs);
	edge_table_free(&et);
	if (rc != PB_OK) {
		pb_builder_free(b);
		return rc;
	}
	/* Nodes without consumers are the graph's outputs. */
	for (Agnode_t *n = agfstnode(G); n; n = agnxtnode(G, n))
		if (!agfstout(G, n))
			pb_builder_output(b, pb_builder_tensor(b, agnameof(n)));

	rc = pb_builder_finish(b, opts, out, err);
	if (rc != PB_OK)
		return rc;
	pb_graph *g = *out;
	g->shapes_given = 1; /* DOT states shapes (or none): never inferred */
	g->n_unknown_shapes = 0;
	for (int i = 0; i < g->n_nodes; i++) {
		pb_node *nd = &g->nodes[i];
		int known = 1;
		for (int j = 0; j < nd->n_outputs; j++)
			if (nd->outputs[j] >= 0 && pb_tensor_numel(&g->tensors[nd->outputs[j]]) < 0)
				known = 0;
		nd->shape_known = (unsigned)known;
		g->n_unknown_shapes += !known;
	}
	return PB_OK;
}

int pb_dot_read_buffer(const char *text, size_t len, const char *name, const pb_load_opts *opts,
                       pb_graph **out, pb_error *err)
{
	*out = NULL;
	if (!name)
		name = "<dot>";
	char *buf = malloc(len + 1);
	if (!buf)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", name);
	memcpy(buf, text, len);
	buf[len] = '\0';
	size_t i = 0;
	while (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r')
		i++;
	if (!buf[i]) {
		free(buf);
		return pb_err(err, PB_EINPUT, "%s: empty file (expected a DOT digraph)", name);
	}

	dot_errbuf[0] = '\0';
	agusererrf prev = agseterrf(dot_errf);
	agreseterrors();
	agreadline(1);
	/* agread on a memory stream (not agmemread) so that the rest of the file
	 * is read too: a second graph or trailing text would otherwise be
	 * silently ignored. Reading to the end also leaves cgraph's lexer with
	 * nothing buffered for the next file. */
	FILE *mf = fmemopen(buf, len, "r");
	Agraph_t *G = mf ? agread(mf, NULL) : NULL;
	int more = 0;
	if (G && !agerrors()) {
		Agraph_t *G2;
		while ((G2 = agread(mf, NULL)) != NULL) {
			more++;
			agclose(G2);
		}
	}
	if (mf)
		fclose(mf);
	/* A number split in two ("macs=5.4M" unquoted) silently changes the
	 * graph even when the parse succeeds: treat it as an error. */
	int errors = agerrors() || strstr(dot_errbuf, "badly delimited number") != NULL;
	agseterrf(prev);
	free(buf);
	if (G && !errors && more) {
		agclose(G);
		return pb_err(err, PB_EINPUT,
		              "%s: the file holds %d graphs; partbench reads one digraph per file",
		              name, more + 1);
	}
	if (!G || errors) {
		if (G)
			agclose(G);
		char msg[600];
		return pb_err(err, PB_EINPUT, "%s: not a valid DOT graph: %s", name,
		              dot_errmsg(msg, sizeof msg));
	}
	int rc = dot_convert(G, name, opts, out, err);
	agclose(G);
	return rc;
}

int pb_dot_read(const char *path, const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	*out = NULL;
	char *buf;
	size_t len;
	int rc = pb_read_file(path, PB_DOOR_MODEL, 0, "graph", &buf, &len, err);
	if (rc != PB_OK)
		return rc;
	rc = pb_dot_read_buffer(buf, len, path, opts, out, err);
	free(buf);
	return rc;
}
