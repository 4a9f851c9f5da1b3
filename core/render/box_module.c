/*
 * box_module.c — a box's module path (box_module.h). A node's module is its
 * name without the leaf: up to the last '/' of a '/'-separated name
 * ("/encoder/layer_3/mlp/MatMul" -> "encoder/layer_3/mlp"), else up to the
 * last '.' ("h0.attn.q" -> "h0.attn"); a name with neither has none. The
 * shared path is the longest prefix of every module that ends at a
 * separator (or is the whole module), so "layer_1" never names a box of
 * layer_1 and layer_10.
 */
#include "render/box_module.h"

#include <stdio.h>
#include <string.h>

/* The module of node v: *mod (no leading '/') and its length; 0 if none. */
static size_t node_module(const pb_graph *g, int v, const char **mod, char *sep)
{
	const char *n = g->nodes[v].name ? g->nodes[v].name : "";
	while (*n == '/')
		n++;
	*sep = strchr(n, '/') ? '/' : '.';
	const char *end = strrchr(n, *sep);
	*mod = n;
	return end ? (size_t)(end - n) : 0;
}

char *pb_box_module(const pb_graph *g, int first, int last, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	buf[0] = '\0';
	const char *common = NULL, *m0 = NULL, *m1 = NULL;
	size_t lc = 0, l0 = 0, l1 = 0;
	char sep = '/';
	for (int v = first; v <= last && v < g->n_nodes; v++) {
		const char *m;
		char s;
		size_t l = node_module(g, v, &m, &s);
		if (!l)
			continue;
		if (!m0) {
			m0 = common = m;
			l0 = lc = l;
			sep = s;
		}
		m1 = m;
		l1 = l;
		size_t k = 0;
		while (k < lc && k < l && common[k] == m[k])
			k++;
		/* back to a component boundary of both */
		if (k < lc || k < l)
			while (k > 0 && !((k == lc || common[k] == sep) && (k == l || m[k] == sep)))
				k--;
		lc = k;
	}
	if (!m0)
		return buf;
	if (lc > 0)
		snprintf(buf, len, "%.*s", (int)lc, common);
	else
		snprintf(buf, len, "%.*s .. %.*s", (int)l0, m0, (int)l1, m1);
	return buf;
}
