/*
 * blocks.c — module-path or structural block hierarchy of a graph, and the
 * labels of its blocks (see blocks.h).
 *
 * Named graphs: one pass splits each name into components; a string map
 * interns every prefix so that a block id names one module. O(total name
 * length).
 *
 * Structural graphs: live widths from a difference array over the
 * computing nodes (constants are skipped and later join the block of the
 * next computing node, so blocks stay intervals of the full order), then a
 * recursive split of each interval by least-width cuts. O(n * depth + e).
 */
#include "render/blocks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strmap.h"

#define KEY(b, i, d) ((b)->key[(size_t)(i)*PB_BLOCKS_MAX_DEPTH + (size_t)(d)])
#define CEND(b, i, d) ((b)->cend[(size_t)(i)*PB_BLOCKS_MAX_DEPTH + (size_t)(d)])

void pb_blocks_free(pb_blocks *b)
{
	if (!b)
		return;
	free(b->depth);
	free(b->key);
	free(b->cend);
	free(b->ord);
	free(b);
}

int pb_blocks_key(const pb_blocks *b, int i, int d)
{
	if (i < 0 || i >= b->n_nodes || d < 1 || d > b->depth[i])
		return -1;
	return KEY(b, i, d - 1);
}

int pb_blocks_same(const pb_blocks *b, int i, int j, int d)
{
	int ki = pb_blocks_key(b, i, d);
	return ki >= 0 && ki == pb_blocks_key(b, j, d);
}

/* Components of the name before its last sep: offsets just past each. */
static int split_name(const char *name, char sep, int *cend)
{
	const char *last = strrchr(name, sep);
	int k = 0;
	for (const char *p = name; last && p < last && k < PB_BLOCKS_MAX_DEPTH;) {
		while (p < last && *p == sep)
			p++;
		if (p >= last)
			break;
		const char *e = p;
		while (e < last && *e != sep)
			e++;
		cend[k++] = (int)(e - name);
		p = e;
	}
	return k;
}

static int named_keys(const pb_graph *g, pb_blocks *b)
{
	b->max_depth = 0;
	pb_strmap *ids = pb_strmap_new((size_t)g->n_nodes);
	char *tmp = NULL;
	size_t cap = 0;
	int next = 0, rc = 0;
	if (!ids)
		return -1;
	for (int i = 0; i < g->n_nodes && rc == 0; i++) {
		const char *name = g->nodes[i].name ? g->nodes[i].name : "";
		b->depth[i] = split_name(name, b->sep, &CEND(b, i, 0));
		for (int d = 0; d < b->depth[i]; d++) {
			size_t l = (size_t)CEND(b, i, d);
			if (l + 1 > cap) {
				char *t = realloc(tmp, l + 64);
				if (!t) {
					rc = -1;
					break;
				}
				tmp = t;
				cap = l + 64;
			}
			memcpy(tmp, name, l);
			tmp[l] = '\0';
			int id = pb_strmap_add(ids, tmp, next, NULL);
			if (id < 0) {
				rc = -1;
				break;
			}
			if (id == next)
				next++;
			KEY(b, i, d) = id;
		}
		if (b->depth[i] > b->max_depth)
			b->max_depth = b->depth[i];
	}
	free(tmp);
	pb_strmap_free(ids);
	b->n_ids = next;
	return rc;
}

typedef struct split_ctx {
	pb_blocks *b;
	const int *pos;   /* computing index -> node id */
	const int *width; /* live width of the cut before computing index q */
	int next_id;
} split_ctx;

/* Cuts computing indices [qa, qb) at level `level` (1-based) into blocks
 * and recurses into each. */
static void split_range(split_ctx *c, int qa, int qb, int level)
{
	int n = qb - qa;
	if (n <= PB_BLOCKS_FANOUT || level > PB_BLOCKS_MAX_DEPTH)
		return;
	int target = n / PB_BLOCKS_FANOUT > 0 ? n / PB_BLOCKS_FANOUT : 1;
	int s = qa, ordinal = 1;
	while (s < qb) {
		int e = qb;
		if (qb - s > target + target / 2) {
			int lo = s + (target / 2 > 0 ? target / 2 : 1);
			int hi = s + target + target / 2;
			if (hi > qb - 1)
				hi = qb - 1;
			e = lo;
			for (int q = lo; q <= hi; q++) {
				int dq = abs(q - (s + target)), de = abs(e - (s + target));
				if (c->width[q] < c->width[e] ||
				    (c->width[q] == c->width[e] && dq < de))
					e = q;
			}
		}
		int id = c->next_id++;
		c->b->ord[id] = ordinal++;
		for (int q = s; q < e; q++) {
			int v = c->pos[q];
			KEY(c->b, v, level - 1) = id;
			c->b->depth[v] = level;
		}
		split_range(c, s, e, level + 1);
		s = e;
	}
}

static int structural_keys(const pb_graph *g, const unsigned char *is_const, pb_blocks *b)
{
	int n = g->n_nodes, m = 0;
	int *pos = malloc((size_t)(n + 1) * sizeof *pos);
	int *qof = malloc((size_t)(n + 1) * sizeof *qof);
	int *diff = calloc((size_t)(n + 2), sizeof *diff);
	int rc = -1;
	if (!pos || !qof || !diff)
		goto out;
	for (int i = 0; i < n; i++) {
		qof[i] = m;
		if (!is_const || !is_const[i])
			pos[m++] = i;
	}
	/* a value of computing node index q is live at the cuts q+1 .. (index
	 * of its last consumer) */
	for (int q = 0; q < m; q++) {
		const pb_node *nd = &g->nodes[pos[q]];
		int last = -1;
		for (int k = 0; k < nd->n_succs; k++)
			if (nd->succs[k] > last)
				last = nd->succs[k];
		if (last < 0)
			continue;
		int lq = qof[last]; /* computing index of the last consumer */
		if (lq > q) {
			diff[q + 1]++;
			diff[lq + 1]--;
		}
	}
	for (int q = 1; q <= m; q++)
		diff[q] += diff[q - 1];
	/* ids: every level creates fewer blocks than it has nodes */
	b->ord = calloc((size_t)(m + 1) * PB_BLOCKS_MAX_DEPTH, sizeof *b->ord);
	if (!b->ord)
		goto out;
	split_ctx c = {b, pos, diff, 0};
	split_range(&c, 0, m, 1);
	b->n_ids = c.next_id;
	/* constants take the blocks of the next computing node (the weights
	 * sit just before their user), or of the last one at the end; those
	 * before the first computing node (exporters put the weight copies of
	 * the whole model there) stay outside every block, so that they form a
	 * box of constants only, which viewers hide */
	for (int i = n - 1, nextc = -1; i >= 0; i--) {
		if (!is_const || !is_const[i]) {
			nextc = i;
			continue;
		}
		int src = nextc >= 0 ? nextc : m > 0 ? pos[m - 1] : -1;
		if (src < 0 || (m > 0 && i < pos[0]))
			continue;
		b->depth[i] = b->depth[src];
		memcpy(&KEY(b, i, 0), &KEY(b, src, 0), sizeof(int) * PB_BLOCKS_MAX_DEPTH);
	}
	for (int i = 0; i < n; i++)
		if (b->depth[i] > b->max_depth)
			b->max_depth = b->depth[i];
	rc = 0;
out:
	free(pos);
	free(qof);
	free(diff);
	return rc;
}

/* 1 when a computing node has a module path. */
static int has_paths(const pb_blocks *b, const unsigned char *is_const)
{
	for (int i = 0; i < b->n_nodes; i++)
		if (b->depth[i] > 0 && !(is_const && is_const[i]))
			return 1;
	return 0;
}

/*
 * 1 when the blocks of every level are (nearly) intervals of the order: at
 * most twice as many runs of computing nodes as blocks. Dotted names that
 * are not module paths ("p2o.Conv.12": op type and counter) scatter each
 * "block" over the whole graph and fail this.
 */
static int contiguous(const pb_blocks *b, const unsigned char *is_const)
{
	char *seen = calloc((size_t)b->n_ids + 1, 1);
	int ok = seen != NULL;
	for (int d = 1; ok && d <= b->max_depth; d++) {
		int runs = 0, ids = 0, prev = -1;
		for (int i = 0; i < b->n_nodes; i++) {
			int k = pb_blocks_key(b, i, d);
			if (k < 0 || (is_const && is_const[i]))
				continue;
			runs += k != prev;
			ids += !seen[k];
			seen[k] = 1;
			prev = k;
		}
		ok = runs <= 2 * ids;
	}
	free(seen);
	return ok;
}

int pb_blocks_compute(const pb_graph *g, const unsigned char *is_const, pb_blocks **out,
                      pb_error *err)
{
	*out = NULL;
	int n = g->n_nodes;
	size_t cells = (size_t)(n > 0 ? n : 1) * PB_BLOCKS_MAX_DEPTH;
	pb_blocks *b = calloc(1, sizeof *b);
	if (b) {
		b->n_nodes = n;
		b->sep = '/';
		b->depth = calloc((size_t)(n > 0 ? n : 1), sizeof *b->depth);
		b->key = malloc(cells * sizeof *b->key);
		b->cend = malloc(cells * sizeof *b->cend);
	}
	if (!b || !b->depth || !b->key || !b->cend || named_keys(g, b) != 0) {
		pb_blocks_free(b);
		return pb_err(err, PB_ENOMEM, "blocks: out of memory (%d nodes)", n);
	}
	int named = has_paths(b, is_const);
	if (!named) {
		/* "h0.attn.q.matmul": dotted module paths, if they are modules */
		b->sep = '.';
		if (named_keys(g, b) != 0) {
			pb_blocks_free(b);
			return pb_err(err, PB_ENOMEM, "blocks: out of memory (%d nodes)", n);
		}
		named = has_paths(b, is_const) && contiguous(b, is_const);
	}
	if (!named) {
		free(b->cend);
		b->cend = NULL;
		b->structural = 1;
		b->max_depth = 0;
		memset(b->depth, 0, (size_t)(n > 0 ? n : 1) * sizeof *b->depth);
		if (structural_keys(g, is_const, b) != 0) {
			pb_blocks_free(b);
			return pb_err(err, PB_ENOMEM, "blocks: out of memory (%d nodes)", n);
		}
	}
	*out = b;
	return PB_OK;
}

/* 1 when s[a..b) holds a digit (a container index: "5", "layer_11"). */
static int has_digit(const char *s, int a, int b)
{
	for (int i = a; i < b; i++)
		if (s[i] >= '0' && s[i] <= '9')
			return 1;
	return 0;
}

/*
 * Shortens s to at most max characters, keeping what tells sibling blocks
 * apart: ".." + the tail ("..tures.5", "..layers.3.attn"; a cut token that
 * would keep under 3 characters goes whole) as long as the tail holds the
 * last token with a digit (the container index); otherwise the label starts
 * at that token and is cut at the end ("..6.self_att"), and a token longer
 * than the room keeps its tail ("..nselayer11").
 */
static void shorten(char *s, int max)
{
	int l = (int)strlen(s);
	if (l <= max || max < 3)
		return;
	int st[64], nt = 0, ti = -1;
	st[nt++] = 0;
	for (int i = 0; s[i] && nt < 64; i++)
		if (s[i] == '.')
			st[nt++] = i + 1;
	for (int t = 0; t < nt; t++)
		if (has_digit(s, st[t], t + 1 < nt ? st[t + 1] - 1 : l))
			ti = t;
	int n = max - 2, from = l - n;
	const char *dot = strchr(s + from, '.');
	if (dot && dot - (s + from) < 3)
		from = (int)(dot - s) + 1;
	if (ti >= 0 && from > st[ti]) {
		int end = ti + 1 < nt ? st[ti + 1] - 1 : l;
		from = end - st[ti] > n ? end - n : st[ti];
	}
	if (l - from < n)
		n = l - from;
	memmove(s + 2, s + from, (size_t)n);
	s[0] = s[1] = '.';
	s[n + 2] = '\0';
}

static void named_label(const pb_graph *g, const pb_blocks *b, int i, int d, int max, char *buf,
                        size_t len)
{
	const char *name = g->nodes[i].name;
	int seg[PB_BLOCKS_MAX_DEPTH], n_seg = 0;
	size_t k = 0;
	buf[0] = '\0';
	for (int c = 0; c < d; c++) {
		int end = CEND(b, i, c), start = c ? CEND(b, i, c - 1) : 0;
		while (start < end && name[start] == b->sep)
			start++;
		const char *comp = name + start;
		int cl = end - start;
		/* PyTorch names a container's children "parent.N": merge */
		if (n_seg > 0) {
			int pl = (int)k - seg[n_seg - 1];
			if (cl > pl && strncmp(comp, buf + seg[n_seg - 1], (size_t)pl) == 0 &&
			    comp[pl] == '.') {
				k = (size_t)seg[--n_seg];
				if (n_seg > 0)
					k--; /* drop the '.' before the merged segment */
			}
		}
		if (n_seg > 0 && k + 1 < len)
			buf[k++] = '.';
		seg[n_seg++] = (int)k;
		int room = (int)(len - 1 - k);
		if (cl > room)
			cl = room > 0 ? room : 0;
		memcpy(buf + k, comp, (size_t)cl);
		k += (size_t)cl;
		buf[k] = '\0';
	}
	shorten(buf, max);
}

static void structural_label(const pb_graph *g, const pb_blocks *b, const unsigned char *is_const,
                             int first, int last, int d, int max, char *buf, size_t len)
{
	char path[64] = "";
	size_t k = 0;
	if (b->depth[first] == 0) /* constants before every block */
		return;
	for (int c = 0; c < d && c < b->depth[first]; c++) {
		int w = snprintf(path + k, sizeof path - k, "%s%d", c ? "." : "",
		                 b->ord[KEY(b, first, c)]);
		if (w < 0 || (size_t)w >= sizeof path - k)
			break;
		k += (size_t)w;
	}
	int f = -1, l = -1;
	for (int i = first; i <= last; i++)
		if (!is_const || !is_const[i]) {
			if (f < 0)
				f = i;
			l = i;
		}
	if (f < 0)
		snprintf(buf, len, "%s constants", path);
	else if (f == l || strcmp(g->nodes[f].op, g->nodes[l].op) == 0)
		snprintf(buf, len, "%s %s", path, g->nodes[f].op);
	else
		snprintf(buf, len, "%s %s..%s", path, g->nodes[f].op, g->nodes[l].op);
	if (max >= 0 && (size_t)max < len)
		buf[max] = '\0';
}

char *pb_blocks_label(const pb_graph *g, const pb_blocks *b, const unsigned char *is_const,
                      int first, int last, int d, int max, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (first < 0 || last >= b->n_nodes || first > last || d < 1)
		return buf;
	if (b->structural) {
		structural_label(g, b, is_const, first, last, d, max, buf, len);
		return buf;
	}
	for (int i = first; i <= last; i++)
		if (b->depth[i] >= d) {
			named_label(g, b, i, d, max, buf, len);
			break;
		}
	return buf;
}
