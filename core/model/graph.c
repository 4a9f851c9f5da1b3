/*
 * graph.c — construction and queries of the immutable Graph (see graph.h).
 *
 * Building: loaders declare tensors and nodes in file order through pb_builder;
 * pb_builder_finish() links producers and consumers, applies input-dimension
 * overrides, checks acyclicity with
 * igraph (igraph_is_dag; on failure a node on a cycle is named; skipped when
 * every edge already points forward in file order), and numbers
 * nodes by Kahn's algorithm with a min-heap keyed on file order. igraph's own
 * igraph_topological_sorting uses a FIFO queue, which interleaves parallel
 * branches even when the file is already sorted; the heap keeps file order
 * whenever it is valid, which is what users expect of "the linear list".
 *
 * Memory: node names, domains, attribute names and the per-node/per-tensor id
 * arrays are carved from large blocks owned by the graph (g->pool), so a
 * 6.6k-node model costs a few dozen mallocs instead of ~70k, and
 * pb_graph_free releases them in one sweep. Tensor names are the tensor
 * index's own copies of its keys. For large graphs (pb_builder_reserve with
 * >= 2048 nodes) the node and tensor arrays and the first pool block share
 * one 2 MB-aligned mapping advised for transparent huge pages; arrays that
 * outgrow it move to the heap (pool_mapped() tells the two apart). Node ops, attribute values,
 * members and constant values stay separate allocations.
 */
#include "model/graph.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include "util/lazy_igraph.h"
#include <strings.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strmap.h"

/* ---------------------------------------------------------------- dtypes */

int pb_dtype_size(int dtype)
{
	switch (dtype) {
	case PB_DT_FLOAT:
	case PB_DT_INT32:
	case PB_DT_UINT32:
		return 4;
	case PB_DT_UINT8:
	case PB_DT_INT8:
	case PB_DT_BOOL:
		return 1;
	case PB_DT_UINT16:
	case PB_DT_INT16:
	case PB_DT_FLOAT16:
	case PB_DT_BFLOAT16:
		return 2;
	case PB_DT_INT64:
	case PB_DT_DOUBLE:
	case PB_DT_UINT64:
	case PB_DT_COMPLEX64:
		return 8;
	case PB_DT_COMPLEX128:
		return 16;
	default:
		return 0;
	}
}

const char *pb_dtype_name(int dtype)
{
	static const char *names[] = {"undefined",  "float32", "uint8",  "int8",   "uint16",
	                              "int16",      "int32",   "int64",  "string", "bool",
	                              "float16",    "float64", "uint32", "uint64", "complex64",
	                              "complex128", "bfloat16"};
	if (dtype >= 0 && dtype <= PB_DT_BFLOAT16)
		return names[dtype];
	return "unknown";
}

int pb_dtype_is_float(int dtype)
{
	return dtype == PB_DT_FLOAT || dtype == PB_DT_DOUBLE || dtype == PB_DT_FLOAT16 ||
	       dtype == PB_DT_BFLOAT16;
}

/* ---------------------------------------------------------------- values */

/* One allocation per value: the header, then the integer view, then the
 * floating view (values are created and freed only here). */
pb_value *pb_value_new(int dtype, int rank, const int64_t *dims)
{
	if (rank < 0 || rank > PB_MAX_RANK)
		return NULL;
	int64_t n = 1;
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0 || (dims[i] > 0 && n > PB_VALUE_MAX / dims[i] + 1))
			return NULL;
		n *= dims[i];
	}
	if (n > PB_VALUE_MAX)
		return NULL;
	size_t cells = (size_t)(n ? n : 1);
	pb_value *v = calloc(1, sizeof *v + cells * (sizeof *v->i + sizeof *v->f));
	if (!v)
		return NULL;
	v->dtype = dtype;
	v->rank = rank;
	for (int i = 0; i < rank; i++)
		v->dims[i] = dims[i];
	v->numel = n;
	/* One block: header, then the integer cells, then the double cells
	 * (both 8-byte aligned: sizeof *v is a multiple of 8). */
	v->i = (int64_t *)(void *)(v + 1);
	v->f = (double *)(void *)(v->i + cells);
	return v;
}

pb_value *pb_value_copy(const pb_value *v)
{
	if (!v)
		return NULL;
	pb_value *c = pb_value_new(v->dtype, v->rank, v->dims);
	if (!c)
		return NULL;
	memcpy(c->i, v->i, (size_t)v->numel * sizeof *v->i);
	memcpy(c->f, v->f, (size_t)v->numel * sizeof *v->f);
	return c;
}

void pb_value_free(pb_value *v)
{
	free(v);
}

/* ---------------------------------------------------------------- attrs */

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* ---------------------------------------------------------------- pool */

typedef struct pool_block {
	struct pool_block *next;
	size_t used, cap;
	size_t map_len; /* 0: malloc'ed; else its own mapping of this length */
	max_align_t data[];
} pool_block;

#define POOL_BLOCK (64 * 1024)

/* n bytes (8-byte aligned) from g's pool; NULL when out of memory. */
static void *pool_alloc(pb_graph *g, size_t n)
{
	n = (n + 7) & ~(size_t)7;
	if (n == 0)
		n = 8;
	pool_block *b = g->pool;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > POOL_BLOCK ? n : POOL_BLOCK;
		pool_block *nb = malloc(sizeof *nb + cap);
		if (!nb)
			return NULL;
		nb->used = 0;
		nb->cap = cap;
		nb->map_len = 0;
		if (b && cap > POOL_BLOCK) { /* an oversized request: behind the head */
			nb->next = b->next;
			b->next = nb;
		} else {
			nb->next = b;
			g->pool = nb;
		}
		b = nb;
	}
	void *p = (char *)b->data + b->used;
	b->used += n;
	return p;
}

static char *pool_strdup(pb_graph *g, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *p = pool_alloc(g, n);
	if (p)
		memcpy(p, s, n);
	return p;
}

static void pool_free(void *pool)
{
	for (pool_block *b = pool; b;) {
		pool_block *n = b->next;
		if (b->map_len)
			munmap(b, b->map_len);
		else
			free(b);
		b = n;
	}
}

/* Whether p points into one of g's mapped blocks (arrays placed there by
 * pb_builder_reserve are never passed to free or realloc). */
static int pool_mapped(const pb_graph *g, const void *p)
{
	for (const pool_block *b = g->pool; p && b; b = b->next)
		if (b->map_len && (const char *)p >= (const char *)b->data &&
		    (const char *)p < (const char *)b->data + b->cap)
			return 1;
	return 0;
}

#define HUGE_PAGE ((size_t)2 << 20)

/* For large graphs: a head pool block of at least cap bytes in its own
 * 2 MB-aligned mapping marked for transparent huge pages, so the node and
 * tensor arrays and the names fault in once per 2 MB instead of once per
 * 4 KB (page faults were a third of `info`'s CPU time on a 6.6k-node
 * model). Returns 0, or -1 when the mapping fails (the caller falls back to
 * malloc). */
static int pool_map_block(pb_graph *g, size_t cap)
{
#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
	size_t len = (sizeof(pool_block) + cap + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	char *raw =
	    mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return -1;
	char *base = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	if (base > raw)
		munmap(raw, (size_t)(base - raw));
	if (raw + len + HUGE_PAGE > base + len)
		munmap(base + len, (size_t)(raw + len + HUGE_PAGE - (base + len)));
	madvise(base, len, MADV_HUGEPAGE); /* advice only: small pages if refused */
	pool_block *nb = (pool_block *)(void *)base;
	nb->used = 0;
	nb->cap = len - sizeof *nb;
	nb->map_len = len;
	nb->next = g->pool;
	g->pool = nb;
	return 0;
#else
	(void)g;
	(void)cap;
	return -1;
#endif
}

static void attr_copy(pb_graph *g, pb_attr *dst, const pb_attr *src)
{
	*dst = *src;
	dst->name = pool_strdup(g, src->name);
	dst->s = xstrdup(src->s);
	dst->floats = NULL;
	dst->ints = NULL;
	dst->strings = NULL;
	if (src->floats && src->n > 0) {
		dst->floats = malloc((size_t)src->n * sizeof *dst->floats);
		if (dst->floats)
			memcpy(dst->floats, src->floats, (size_t)src->n * sizeof *dst->floats);
	}
	if (src->ints && src->n > 0) {
		dst->ints = malloc((size_t)src->n * sizeof *dst->ints);
		if (dst->ints)
			memcpy(dst->ints, src->ints, (size_t)src->n * sizeof *dst->ints);
	}
	if (src->strings && src->n > 0) {
		dst->strings = calloc((size_t)src->n, sizeof *dst->strings);
		for (int i = 0; dst->strings && i < src->n; i++)
			dst->strings[i] = xstrdup(src->strings[i]);
	}
	dst->t = pb_value_copy(src->t);
}

static void attr_free(pb_attr *a)
{
	free(a->s); /* the name is in the graph's pool */
	free(a->floats);
	free(a->ints);
	for (int i = 0; a->strings && i < a->n; i++)
		free(a->strings[i]);
	free(a->strings);
	pb_value_free(a->t);
}

/* ---------------------------------------------------------------- builder */

struct pb_builder {
	pb_graph *g; /* nodes in file order while building */
	int cap_nodes, cap_tensors;
	pb_cost *fixed; /* per node, NAN = infer */
	int cap_fixed;
	int cap_in, cap_out, cap_ops;
	int oom; /* an allocation failed: finish() reports it */
};

pb_builder *pb_builder_new(const char *path, const char *format)
{
	pb_builder *b = calloc(1, sizeof *b);
	if (!b)
		return NULL;
	b->g = calloc(1, sizeof *b->g);
	if (!b->g) {
		free(b);
		return NULL;
	}
	b->g->path = xstrdup(path ? path : "");
	b->g->format = xstrdup(format ? format : "");
	b->g->node_index = pb_strmap_new(64);
	b->g->tensor_index = pb_strmap_new(128);
	return b;
}

/* Grows *ptr (elements of size elem) to hold at least need. The new part is
 * left uninitialised (every user fills an element when it takes it, and
 * untouched capacity then costs no page faults). Returns 0, or -1 when
 * memory runs out (the caller flags the builder). */
static int grow(const pb_graph *g, void **ptr, int *cap, int need, size_t elem)
{
	if (need <= *cap)
		return 0;
	int nc = *cap ? *cap * 2 : 16;
	while (nc < need)
		nc *= 2;
	void *np;
	if (pool_mapped(g, *ptr)) { /* leaves the mapped block for the heap */
		np = malloc((size_t)nc * elem);
		if (np)
			memcpy(np, *ptr, (size_t)*cap * elem);
	} else {
		np = realloc(*ptr, (size_t)nc * elem);
	}
	if (!np)
		return -1;
	*ptr = np;
	*cap = nc;
	return 0;
}

#define GROW(b, ptr, cap, need) grow((b)->g, (void **)&(ptr), &(cap), (need), sizeof *(ptr))

void pb_builder_reserve(pb_builder *b, int n_nodes, int n_tensors)
{
	pb_graph *g = b->g;
	if (n_nodes >= 2048 && n_tensors >= 0 && !g->nodes && !g->tensors) {
		/* Node and tensor arrays, then names and id arrays (~160 bytes per
		 * node in ONNX models), in one block of huge pages. */
		size_t nb = (size_t)n_nodes * sizeof *g->nodes;
		size_t tb = (size_t)n_tensors * sizeof *g->tensors;
		if (pool_map_block(g, nb + tb + (size_t)n_nodes * 160) == 0) {
			g->nodes = pool_alloc(g, nb);
			g->tensors = pool_alloc(g, tb);
			b->cap_nodes = n_nodes;
			b->cap_tensors = n_tensors;
		}
	}
	if (GROW(b, g->nodes, b->cap_nodes, n_nodes) || GROW(b, b->fixed, b->cap_fixed, n_nodes) ||
	    GROW(b, g->tensors, b->cap_tensors, n_tensors))
		b->oom = 1;
	/* Pre-sized name maps: no rehashing while a large model is read. */
	if (g->n_tensors == 0 && n_tensors > 64) {
		pb_strmap *m = pb_strmap_new((size_t)n_tensors);
		if (m) {
			pb_strmap_free(g->tensor_index);
			g->tensor_index = m;
		}
	}
	if (g->n_nodes == 0 && n_nodes > 32) {
		pb_strmap *m = pb_strmap_new((size_t)n_nodes);
		if (m) {
			pb_strmap_free(g->node_index);
			g->node_index = m;
		}
	}
}

int pb_builder_tensor(pb_builder *b, const char *name)
{
	pb_graph *g = b->g;
	if (!g->tensor_index || GROW(b, g->tensors, b->cap_tensors, g->n_tensors + 1)) {
		b->oom = 1;
		return -1;
	}
	/* One lookup: the id of the existing tensor, or n_tensors for a new one.
	 * A new tensor's name is the map's copy of the key (freed with the map,
	 * which lives as long as the graph). */
	const char *stored = NULL;
	int id = pb_strmap_add(g->tensor_index, name, g->n_tensors, &stored);
	if (id < 0) {
		b->oom = 1;
		return -1;
	}
	if (id < g->n_tensors)
		return id;
	g->n_tensors++;
	pb_tensor *t = &g->tensors[id];
	memset(t, 0, sizeof *t);
	t->name = (char *)stored;
	t->rank = -1;
	t->producer = -1;
	for (int i = 0; i < PB_MAX_RANK; i++)
		t->dims[i] = PB_DIM_UNKNOWN;
	return id;
}

pb_tensor *pb_builder_tensor_ptr(pb_builder *b, int id)
{
	return (id >= 0 && id < b->g->n_tensors) ? &b->g->tensors[id] : NULL;
}

void pb_builder_set_shape(pb_builder *b, int tid, int dtype, int rank, const int64_t *dims,
                          char *const *dim_params)
{
	pb_tensor *t = pb_builder_tensor_ptr(b, tid);
	if (!t)
		return;
	if (dtype)
		t->dtype = dtype;
	if (rank < 0 || rank > PB_MAX_RANK)
		return;
	t->rank = rank;
	for (int i = 0; i < rank; i++) {
		t->dims[i] = dims ? dims[i] : PB_DIM_UNKNOWN;
		free(t->dim_params[i]);
		t->dim_params[i] = (dim_params && dim_params[i]) ? strdup(dim_params[i]) : NULL;
	}
}

int pb_builder_node(pb_builder *b, const char *name, const char *op, const char *domain,
                    const char *const *inputs, int n_inputs, const char *const *outputs,
                    int n_outputs)
{
	pb_graph *g = b->g;
	if (GROW(b, g->nodes, b->cap_nodes, g->n_nodes + 1) ||
	    GROW(b, b->fixed, b->cap_fixed, g->n_nodes + 1)) {
		b->oom = 1;
		return -1;
	}
	int id = g->n_nodes++;
	pb_node *n = &g->nodes[id];
	memset(n, 0, sizeof *n);
	char auto_name[64];
	if (!name || !*name) {
		snprintf(auto_name, sizeof auto_name, "%s_%d", op ? op : "node", id);
		name = auto_name;
	}
	n->name = pool_strdup(g, name);
	n->op = xstrdup(op ? op : "");
	n->domain = pool_strdup(g, (domain && strcmp(domain, "ai.onnx") != 0) ? domain : "");
	n->file_order = id;
	n->inputs = pool_alloc(g, (size_t)n_inputs * sizeof *n->inputs);
	n->outputs = pool_alloc(g, (size_t)n_outputs * sizeof *n->outputs);
	if (!n->name || !n->op || !n->domain || !n->inputs || !n->outputs) {
		b->oom = 1;
		n->n_inputs = n->n_outputs = 0;
		return id;
	}
	n->n_inputs = n_inputs;
	n->n_outputs = n_outputs;
	for (int i = 0; i < n_inputs; i++)
		n->inputs[i] = (inputs[i] && *inputs[i]) ? pb_builder_tensor(b, inputs[i]) : -1;
	for (int i = 0; i < n_outputs; i++)
		n->outputs[i] = (outputs[i] && *outputs[i]) ? pb_builder_tensor(b, outputs[i]) : -1;
	b->fixed[id] = (pb_cost){NAN, NAN, NAN, NAN, NAN, NAN};
	return id;
}

void pb_builder_attr(pb_builder *b, int nid, const pb_attr *a)
{
	pb_node *n = &b->g->nodes[nid];
	/* Capacity doubles at powers of two (attrs are only grown here). */
	int k = n->n_attrs;
	if (k == 0 || (k >= 4 && (k & (k - 1)) == 0)) {
		pb_attr *na = realloc(n->attrs, (size_t)(k ? 2 * k : 4) * sizeof *na);
		if (!na) {
			b->oom = 1;
			return;
		}
		n->attrs = na;
	}
	attr_copy(b->g, &n->attrs[n->n_attrs++], a);
}

void pb_builder_node_cost(pb_builder *b, int nid, const pb_cost *c)
{
	b->fixed[nid] = *c;
}

void pb_builder_node_members(pb_builder *b, int nid, const int *members, const char *const *names,
                             int n)
{
	pb_node *node = &b->g->nodes[nid];
	node->members = calloc((size_t)(n ? n : 1), sizeof *node->members);
	node->member_names = calloc((size_t)(n ? n : 1), sizeof *node->member_names);
	node->n_members = n;
	for (int i = 0; i < n; i++) {
		node->members[i] = members ? members[i] : -1;
		node->member_names[i] = xstrdup(names ? names[i] : NULL);
	}
}

/* Appends v; returns -1 when memory runs out. */
static int append_int(int **arr, int *n, int v)
{
	int *na = realloc(*arr, (size_t)(*n + 1) * sizeof *na);
	if (!na)
		return -1;
	*arr = na;
	(*arr)[(*n)++] = v;
	return 0;
}

void pb_builder_input(pb_builder *b, int tid)
{
	b->g->tensors[tid].is_input = 1;
}

void pb_builder_output(pb_builder *b, int tid)
{
	if (!b->g->tensors[tid].is_output && append_int(&b->g->outputs, &b->g->n_outputs, tid))
		b->oom = 1;
	b->g->tensors[tid].is_output = 1;
}

void pb_builder_initializer(pb_builder *b, int tid, int external)
{
	b->g->tensors[tid].is_initializer = 1;
	b->g->tensors[tid].external_data = external ? 1 : 0;
}

void pb_builder_value(pb_builder *b, int tid, pb_value *v)
{
	pb_tensor *t = &b->g->tensors[tid];
	pb_value_free(t->value);
	t->value = v;
}

void pb_builder_opset(pb_builder *b, const char *domain, int64_t version)
{
	pb_graph *g = b->g;
	pb_opset *no = realloc(g->opsets, (size_t)(g->n_opsets + 1) * sizeof *no);
	if (!no) {
		b->oom = 1;
		return;
	}
	g->opsets = no;
	g->opsets[g->n_opsets].domain =
	    xstrdup((domain && strcmp(domain, "ai.onnx") != 0) ? domain : "");
	g->opsets[g->n_opsets].version = version;
	g->n_opsets++;
}

void pb_builder_name(pb_builder *b, const char *name)
{
	free(b->g->name);
	b->g->name = xstrdup(name);
}

void pb_builder_userdata(pb_builder *b, void *data, void (*free_fn)(void *))
{
	b->g->userdata = data;
	b->g->userdata_free = free_fn;
}

void pb_builder_free(pb_builder *b)
{
	if (!b)
		return;
	pb_graph_free(b->g);
	free(b->fixed);
	free(b);
}

/* Binary min-heap of ints (file-order keys equal node indices here). */
typedef struct {
	int *a;
	int n;
} heap;

static void heap_push(heap *h, int v)
{
	int i = h->n++;
	h->a[i] = v;
	while (i > 0 && h->a[(i - 1) / 2] > h->a[i]) {
		int p = (i - 1) / 2, t = h->a[p];
		h->a[p] = h->a[i];
		h->a[i] = t;
		i = p;
	}
}

static int heap_pop(heap *h)
{
	int top = h->a[0];
	h->a[0] = h->a[--h->n];
	int i = 0;
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && h->a[l] < h->a[m])
			m = l;
		if (r < h->n && h->a[r] < h->a[m])
			m = r;
		if (m == i)
			break;
		int t = h->a[m];
		h->a[m] = h->a[i];
		h->a[i] = t;
		i = m;
	}
	return top;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static void sort_unique(int *a, int *n)
{
	if (*n <= 1)
		return;
	qsort(a, (size_t)*n, sizeof *a, cmp_int);
	int k = 1;
	for (int i = 1; i < *n; i++)
		if (a[i] != a[k - 1])
			a[k++] = a[i];
	*n = k;
}

/* 1 if node v reaches itself along the edges (CSR: succ[start[u]..start[u+1])).
 * seen and stack hold n entries each. */
static int reaches_itself(int v, const int *start, const int *succ, unsigned char *seen, int *stack,
                          int n)
{
	memset(seen, 0, (size_t)n);
	int top = 0;
	stack[top++] = v;
	while (top > 0) {
		int u = stack[--top];
		for (int k = start[u]; k < start[u + 1]; k++) {
			int w = succ[k];
			if (w == v)
				return 1;
			if (!seen[w]) {
				seen[w] = 1;
				stack[top++] = w;
			}
		}
	}
	return 0;
}

/* A node on a cycle: the head of a feedback-arc-set edge that reaches
 * itself. Every cycle holds an edge of any feedback arc set, and both ends of
 * that edge lie on the cycle, so one exists; igraph's approximate (Eades) set
 * may also hold edges between cycles, whose heads are on none, hence the
 * check. Returns 0 when out of memory (any node then). */
static int node_on_cycle(const pb_graph *g, const igraph_t *ig, const igraph_vector_int_t *fas,
                         const int *edge_from, const int *edge_to, int n_edges)
{
	int n = g->n_nodes, culprit = 0;
	int *start = calloc((size_t)n + 1, sizeof *start);
	int *succ = malloc(((size_t)n_edges + 1) * sizeof *succ);
	int *stack = malloc(((size_t)n + (size_t)n_edges + 1) * sizeof *stack);
	unsigned char *seen = malloc((size_t)n + 1);
	if (start && succ && stack && seen) {
		for (int e = 0; e < n_edges; e++)
			start[edge_from[e] + 1]++;
		for (int u = 0; u < n; u++)
			start[u + 1] += start[u];
		int *fill = stack; /* reused as the per-node fill cursor */
		for (int u = 0; u < n; u++)
			fill[u] = start[u];
		for (int e = 0; e < n_edges; e++)
			succ[fill[edge_from[e]]++] = edge_to[e];
		igraph_integer_t m = igraph_vector_int_size(fas);
		for (igraph_integer_t k = 0; k < m; k++) {
			igraph_integer_t from, to;
			if (igraph_edge(ig, VECTOR(*fas)[k], &from, &to) != IGRAPH_SUCCESS)
				continue;
			if (reaches_itself((int)to, start, succ, seen, stack, n)) {
				culprit = (int)to;
				break;
			}
		}
	}
	free(start);
	free(succ);
	free(stack);
	free(seen);
	return culprit;
}

/* Checks acyclicity with igraph; names a node on a cycle on failure. When
 * every edge goes forward in file order (ONNX requires files to be sorted,
 * and exporters comply) the graph is acyclic by construction and igraph,
 * with the ~10 libraries it pulls in, is not loaded at all. */
static int check_dag(pb_graph *g, int *edge_from, int *edge_to, int n_edges, pb_error *err)
{
	int forward = 1;
	for (int e = 0; e < n_edges && forward; e++)
		forward = edge_from[e] < edge_to[e];
	if (forward)
		return PB_OK;
	igraph_vector_int_t edges;
	igraph_t ig;
	if (pb_igraph_error())
		return pb_err(err, PB_EINTERNAL, "%s: %s", g->path, pb_igraph_error());
	if (igraph_vector_int_init(&edges, 2 * (igraph_integer_t)n_edges) != IGRAPH_SUCCESS)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
	for (int i = 0; i < n_edges; i++) {
		VECTOR(edges)[2 * i] = edge_from[i];
		VECTOR(edges)[2 * i + 1] = edge_to[i];
	}
	int rc = PB_OK;
	if (igraph_create(&ig, &edges, g->n_nodes, IGRAPH_DIRECTED) != IGRAPH_SUCCESS) {
		igraph_vector_int_destroy(&edges);
		return pb_err(err, PB_ENOMEM, "%s: cannot build the graph", g->path);
	}
	igraph_bool_t dag = 1;
	igraph_is_dag(&ig, &dag);
	if (!dag) {
		igraph_vector_int_t fas;
		igraph_vector_int_init(&fas, 0);
		int culprit = 0;
		if (igraph_feedback_arc_set(&ig, &fas, NULL, IGRAPH_FAS_APPROX_EADES) ==
		    IGRAPH_SUCCESS)
			culprit = node_on_cycle(g, &ig, &fas, edge_from, edge_to, n_edges);
		igraph_vector_int_destroy(&fas);
		rc = pb_err(err, PB_EINPUT, "%s: the graph has a cycle through node '%s' (%s)",
		            g->path, g->nodes[culprit].name, g->nodes[culprit].op);
	}
	igraph_destroy(&ig);
	igraph_vector_int_destroy(&edges);
	return rc;
}

static void apply_overrides(pb_graph *g, const pb_load_opts *opts)
{
	if (!opts)
		return;
	for (int k = 0; k < opts->n_overrides; k++) {
		const pb_input_override *o = &opts->overrides[k];
		int tid = pb_strmap_get(g->tensor_index, o->name, -1);
		if (tid < 0)
			continue;
		pb_tensor *t = &g->tensors[tid];
		/* The batch: a concrete dim 0 that changes (the first such input
		 * sets it; inputs that change it differently are not traced). */
		if (t->rank > 0 && o->rank == t->rank && t->dims[0] > 0 &&
		    o->dims[0] != t->dims[0] &&
		    (!g->batch_exported ||
		     (g->batch_exported == t->dims[0] && g->batch_new == o->dims[0]))) {
			g->batch_exported = t->dims[0];
			g->batch_new = o->dims[0];
			t->batch_changed = 1;
		}
		t->rank = o->rank;
		for (int i = 0; i < o->rank; i++) {
			t->dims[i] = o->dims[i];
			free(t->dim_params[i]);
			t->dim_params[i] = NULL;
		}
	}
}

int pb_builder_finish(pb_builder *b, const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	pb_graph *g = b->g;
	int n = g->n_nodes, rc = PB_OK;
	*out = NULL;
	if (b->oom) {
		rc = pb_err(err, PB_ENOMEM, "%s: out of memory while reading the graph", g->path);
		pb_builder_free(b);
		return rc;
	}

	/* Overrides must name real inputs. */
	for (int k = 0; opts && k < opts->n_overrides; k++) {
		int tid = pb_strmap_get(g->tensor_index, opts->overrides[k].name, -1);
		if (tid < 0 || !g->tensors[tid].is_input || g->tensors[tid].is_initializer) {
			char names[512] = "";
			for (int t = 0; t < g->n_tensors; t++)
				if (g->tensors[t].is_input && !g->tensors[t].is_initializer &&
				    strlen(names) + strlen(g->tensors[t].name) + 3 < sizeof names) {
					strcat(names, names[0] ? ", " : "");
					strcat(names, g->tensors[t].name);
				}
			pb_err(err, PB_EUSAGE,
			       "%s: --input names '%s', which is not a model input (inputs: %s)",
			       g->path, opts->overrides[k].name, names[0] ? names : "none");
			pb_builder_free(b);
			return PB_EUSAGE;
		}
		/* A different rank is a typo, not a size: the shape rules would
		 * silently fall back to the file's value_info. */
		const pb_tensor *t = &g->tensors[tid];
		if (t->rank >= 0 && t->rank != opts->overrides[k].rank) {
			char shp[160];
			pb_tensor_shape_str(t, shp, sizeof shp);
			pb_err(
			    err, PB_EUSAGE,
			    "%s: --input gives '%s' %d dims, but the model declares rank %d (%s)",
			    g->path, t->name, opts->overrides[k].rank, t->rank, shp);
			pb_builder_free(b);
			return PB_EUSAGE;
		}
	}

	/* Producers; a tensor produced twice is an error. */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < g->nodes[i].n_outputs; j++) {
			int t = g->nodes[i].outputs[j];
			if (t < 0)
				continue;
			if (g->tensors[t].producer >= 0) {
				rc =
				    pb_err(err, PB_EINPUT,
				           "%s: tensor '%s' is produced by both '%s' and '%s'",
				           g->path, g->tensors[t].name,
				           g->nodes[g->tensors[t].producer].name, g->nodes[i].name);
				pb_builder_free(b);
				return rc;
			}
			g->tensors[t].producer = i;
		}
	/* A consumed tensor with no producer must be an input or initializer. */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < g->nodes[i].n_inputs; j++) {
			int t = g->nodes[i].inputs[j];
			if (t < 0)
				continue;
			pb_tensor *tt = &g->tensors[t];
			if (tt->producer < 0 && !tt->is_input && !tt->is_initializer) {
				rc = pb_err(
				    err, PB_EINPUT,
				    "%s: node '%s' reads tensor '%s', which no node produces and "
				    "is neither a graph input nor an initializer",
				    g->path, g->nodes[i].name, tt->name);
				pb_builder_free(b);
				return rc;
			}
		}

	/* Edges in file-order ids: per node, its producers deduplicated. */
	int n_edges = 0, max_in = 0;
	for (int i = 0; i < n; i++) {
		n_edges += g->nodes[i].n_inputs;
		if (g->nodes[i].n_inputs > max_in)
			max_in = g->nodes[i].n_inputs;
	}
	int *ef = malloc(((size_t)n_edges + 1) * sizeof *ef);
	int *et = malloc(((size_t)n_edges + 1) * sizeof *et);
	int *indeg = calloc((size_t)n + 1, sizeof *indeg);
	int *tmp = malloc(((size_t)max_in + 1) * sizeof *tmp);
	if (!ef || !et || !indeg || !tmp) {
		free(ef);
		free(et);
		free(indeg);
		free(tmp);
		pb_builder_free(b);
		return pb_err(err, PB_ENOMEM, "out of memory linking the graph");
	}
	n_edges = 0;
	for (int i = 0; i < n; i++) {
		pb_node *nd = &g->nodes[i];
		int np = 0;
		for (int j = 0; j < nd->n_inputs; j++) {
			int t = nd->inputs[j];
			if (t >= 0 && g->tensors[t].producer >= 0)
				tmp[np++] = g->tensors[t].producer;
		}
		sort_unique(tmp, &np);
		for (int k = 0; k < np; k++) {
			ef[n_edges] = tmp[k];
			et[n_edges] = i;
			n_edges++;
		}
		indeg[i] = np;
	}
	free(tmp);
	rc = check_dag(g, ef, et, n_edges, err);
	if (rc != PB_OK) {
		free(ef);
		free(et);
		free(indeg);
		pb_builder_free(b);
		return rc;
	}

	/* Successor lists in file-order ids (CSR) for Kahn. */
	int *start = calloc((size_t)n + 1, sizeof *start);
	int *adj = malloc(((size_t)n_edges + 1) * sizeof *adj);
	for (int e = 0; e < n_edges; e++)
		start[ef[e] + 1]++;
	for (int i = 0; i < n; i++)
		start[i + 1] += start[i];
	int *fill = calloc((size_t)n + 1, sizeof *fill);
	for (int e = 0; e < n_edges; e++)
		adj[start[ef[e]] + fill[ef[e]]++] = et[e];
	free(fill);

	int *order = malloc(((size_t)n + 1) * sizeof *order); /* new id -> old */
	int *newid = malloc(((size_t)n + 1) * sizeof *newid); /* old -> new id */
	heap h = {malloc(((size_t)n + 1) * sizeof(int)), 0};
	for (int i = 0; i < n; i++)
		if (indeg[i] == 0)
			heap_push(&h, i);
	int k = 0;
	while (h.n > 0) {
		int v = heap_pop(&h);
		newid[v] = k;
		order[k++] = v;
		for (int e = start[v]; e < start[v + 1]; e++)
			if (--indeg[adj[e]] == 0)
				heap_push(&h, adj[e]);
	}
	free(h.a);
	free(start);
	free(adj);
	free(indeg);

	/* Permute nodes and fixed costs into topological order (nothing to do
	 * when the file was sorted, as ONNX files are). */
	int sorted = 1;
	for (int i = 0; i < n && sorted; i++)
		sorted = order[i] == i;
	if (!sorted) {
		pb_node *nodes = malloc(((size_t)n + 1) * sizeof *nodes);
		pb_cost *fixed = malloc(((size_t)n + 1) * sizeof *fixed);
		if (!nodes || !fixed) {
			free(nodes);
			free(fixed);
			free(ef);
			free(et);
			free(order);
			free(newid);
			pb_builder_free(b);
			return pb_err(err, PB_ENOMEM, "out of memory linking the graph");
		}
		for (int i = 0; i < n; i++) {
			nodes[i] = g->nodes[order[i]];
			fixed[i] = b->fixed[order[i]];
		}
		if (!pool_mapped(g, g->nodes))
			free(g->nodes);
		g->nodes = nodes;
		free(b->fixed);
		b->fixed = fixed;
	}
	for (int t = 0; t < g->n_tensors; t++)
		if (g->tensors[t].producer >= 0)
			g->tensors[t].producer = newid[g->tensors[t].producer];
	/* Preds, succs and consumers: counted first, then each array is
	 * allocated once at its exact size. */
	for (int e = 0; e < n_edges; e++) {
		g->nodes[newid[ef[e]]].n_succs++;
		g->nodes[newid[et[e]]].n_preds++;
	}
	for (int i = 0; i < n; i++) {
		pb_node *nd = &g->nodes[i];
		if (nd->n_preds)
			b->oom |=
			    !(nd->preds = pool_alloc(g, (size_t)nd->n_preds * sizeof *nd->preds));
		if (nd->n_succs)
			b->oom |=
			    !(nd->succs = pool_alloc(g, (size_t)nd->n_succs * sizeof *nd->succs));
		nd->n_preds = nd->n_succs = 0;
		for (int j = 0; j < nd->n_inputs; j++)
			if (nd->inputs[j] >= 0)
				g->tensors[nd->inputs[j]].n_consumers++;
	}
	for (int t = 0; t < g->n_tensors; t++) {
		pb_tensor *tt = &g->tensors[t];
		if (tt->n_consumers) {
			tt->consumers =
			    pool_alloc(g, (size_t)tt->n_consumers * sizeof *tt->consumers);
			b->oom |= !tt->consumers;
			tt->n_consumers = 0;
		}
	}
	if (b->oom) {
		free(ef);
		free(et);
		free(order);
		free(newid);
		pb_builder_free(b);
		return pb_err(err, PB_ENOMEM, "out of memory linking the graph");
	}
	for (int e = 0; e < n_edges; e++) {
		pb_node *u = &g->nodes[newid[ef[e]]], *v = &g->nodes[newid[et[e]]];
		u->succs[u->n_succs++] = newid[et[e]];
		v->preds[v->n_preds++] = newid[ef[e]];
	}
	free(ef);
	free(et);
	free(order);
	free(newid);
	for (int i = 0; i < n; i++) {
		sort_unique(g->nodes[i].preds, &g->nodes[i].n_preds);
		sort_unique(g->nodes[i].succs, &g->nodes[i].n_succs);
		pb_strmap_put(g->node_index, g->nodes[i].name, i);
		for (int j = 0; j < g->nodes[i].n_inputs; j++) {
			int t = g->nodes[i].inputs[j];
			if (t >= 0)
				g->tensors[t].consumers[g->tensors[t].n_consumers++] = i;
		}
	}
	/* Real model inputs: declared inputs that are not initializers. */
	for (int t = 0; t < g->n_tensors; t++)
		if (g->tensors[t].is_input && !g->tensors[t].is_initializer)
			b->oom |= append_int(&g->inputs, &g->n_inputs, t);
		else
			g->tensors[t].is_input = 0;

	if (b->oom) {
		pb_builder_free(b);
		return pb_err(err, PB_ENOMEM, "out of memory linking the graph");
	}
	apply_overrides(g, opts);
	/* The costs the file states (NAN = infer) go with the graph: the load
	 * module applies them after costing (load.c). */
	g->stated_cost = b->fixed;
	b->fixed = NULL;
	if (!g->name)
		g->name = xstrdup("");
	*out = g;
	b->g = NULL;
	pb_builder_free(b);
	return PB_OK;
}

/* ---------------------------------------------------------------- queries */

int pb_graph_find_node(const pb_graph *g, const char *name)
{
	return pb_strmap_get(g->node_index, name, -1);
}

int pb_graph_find_tensor(const pb_graph *g, const char *name)
{
	return pb_strmap_get(g->tensor_index, name, -1);
}

const pb_attr *pb_node_attr(const pb_node *n, const char *name)
{
	for (int i = 0; i < n->n_attrs; i++)
		if (strcmp(n->attrs[i].name, name) == 0)
			return &n->attrs[i];
	return NULL;
}

int64_t pb_node_attr_int(const pb_node *n, const char *name, int64_t dflt)
{
	const pb_attr *a = pb_node_attr(n, name);
	if (!a)
		return dflt;
	if (a->type == PB_ATTR_FLOAT)
		return (int64_t)a->f;
	return a->i;
}

double pb_node_attr_float(const pb_node *n, const char *name, double dflt)
{
	const pb_attr *a = pb_node_attr(n, name);
	if (!a)
		return dflt;
	if (a->type == PB_ATTR_INT)
		return (double)a->i;
	return a->f;
}

const char *pb_node_attr_str(const pb_node *n, const char *name, const char *dflt)
{
	const pb_attr *a = pb_node_attr(n, name);
	return (a && a->s) ? a->s : dflt;
}

int64_t pb_tensor_numel(const pb_tensor *t)
{
	if (t->rank < 0)
		return -1;
	int64_t n = 1;
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i] < 0 || __builtin_mul_overflow(n, t->dims[i], &n))
			return -1; /* unknown, or too large to be a real tensor */
	}
	return n;
}

double pb_tensor_bytes(const pb_tensor *t)
{
	int64_t n = pb_tensor_numel(t);
	int sz = pb_dtype_size(t->dtype);
	if (n < 0)
		return 0;
	return (double)n * (sz ? sz : 4);
}

unsigned char *pb_graph_constant_nodes(const pb_graph *g)
{
	unsigned char *st = calloc(g->n_nodes > 0 ? (size_t)g->n_nodes : 1, 1);
	if (!st)
		return NULL;
	/* Node ids are topological: one pass decides all. */
	for (int v = 0; v < g->n_nodes; v++) {
		const pb_node *nd = &g->nodes[v];
		/* A node without inputs is a constant only as a Constant: the
		 * source nodes of a DOT graph (op Input) or a random generator
		 * are not. */
		int ok = nd->n_inputs > 0 || strcmp(nd->op, "Constant") == 0;
		for (int k = 0; k < nd->n_inputs && ok; k++) {
			int t = nd->inputs[k];
			if (t < 0)
				continue;
			const pb_tensor *tt = &g->tensors[t];
			ok = tt->producer >= 0 ? st[tt->producer]
			                       : tt->is_initializer && !tt->is_input;
		}
		st[v] = (unsigned char)ok;
	}
	return st;
}

double pb_graph_edge_bytes(const pb_graph *g, int from, int to)
{
	if (from < 0 || to < 0 || from >= g->n_nodes || to >= g->n_nodes)
		return 0;
	const pb_node *a = &g->nodes[from], *b = &g->nodes[to];
	double bytes = 0;
	int sized = 0; /* a connecting tensor of known size (possibly 0 bytes) */
	for (int i = 0; i < a->n_outputs; i++) {
		int t = a->outputs[i];
		if (t < 0)
			continue;
		for (int j = 0; j < b->n_inputs; j++)
			if (b->inputs[j] == t) {
				bytes += pb_tensor_bytes(&g->tensors[t]);
				sized |= pb_tensor_numel(&g->tensors[t]) >= 0;
				break;
			}
	}
	/* Graphs with stated costs (DOT/JSON) may have no tensor shapes: fall back
	 * to the producer's output bytes when the edge exists. */
	if (bytes == 0 && !sized) {
		for (int i = 0; i < a->n_succs; i++)
			if (a->succs[i] == to)
				return a->cost.out_bytes;
	}
	return bytes;
}

/* Appends n bytes of s at *off, truncating at len-1 like snprintf does. */
static void put_trunc(char *buf, size_t len, size_t *off, const char *s, size_t n)
{
	if (*off + 1 >= len)
		return;
	if (n > len - 1 - *off)
		n = len - 1 - *off;
	memcpy(buf + *off, s, n);
	*off += n;
	buf[*off] = '\0';
}

char *pb_tensor_shape_str(const pb_tensor *t, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	size_t off = 0;
	buf[0] = '\0';
	if (t->rank < 0) {
		put_trunc(buf, len, &off, "?", 1);
		return buf;
	}
	if (t->rank == 0)
		put_trunc(buf, len, &off, "scalar", 6);
	for (int i = 0; i < t->rank && off + 1 < len; i++) {
		if (i)
			put_trunc(buf, len, &off, "x", 1);
		if (t->dims[i] >= 0) {
			char tmp[24];
			int n = 0;
			uint64_t v = (uint64_t)t->dims[i];
			do {
				tmp[sizeof tmp - 1 - n++] = (char)('0' + v % 10);
				v /= 10;
			} while (v);
			put_trunc(buf, len, &off, tmp + sizeof tmp - n, (size_t)n);
		} else if (t->dim_params[i]) {
			put_trunc(buf, len, &off, t->dim_params[i], strlen(t->dim_params[i]));
		} else {
			put_trunc(buf, len, &off, "?", 1);
		}
	}
	return buf;
}

int64_t pb_graph_opset(const pb_graph *g, const char *domain)
{
	if (!domain || strcmp(domain, "ai.onnx") == 0)
		domain = "";
	for (int i = 0; i < g->n_opsets; i++)
		if (strcmp(g->opsets[i].domain, domain) == 0)
			return g->opsets[i].version;
	return 0;
}

const char *pb_node_short_name(const pb_node *n)
{
	const char *s = strrchr(n->name, '/');
	if (s && s[1])
		return s + 1;
	return n->name;
}

void pb_graph_free(pb_graph *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->n_nodes; i++) {
		pb_node *n = &g->nodes[i];
		free(n->op);
		for (int a = 0; a < n->n_attrs; a++)
			attr_free(&n->attrs[a]);
		free(n->attrs);
		free(n->members);
		for (int m = 0; n->member_names && m < n->n_members; m++)
			free(n->member_names[m]);
		free(n->member_names);
	}
	if (!pool_mapped(g, g->nodes))
		free(g->nodes);
	for (int i = 0; i < g->n_tensors; i++) {
		pb_tensor *t = &g->tensors[i];
		for (int d = 0; d < PB_MAX_RANK; d++)
			if (t->dim_params[d])
				free(t->dim_params[d]);
		pb_value_free(t->value);
	}
	if (!pool_mapped(g, g->tensors))
		free(g->tensors);
	free(g->inputs);
	free(g->outputs);
	free(g->rewrites);
	for (int i = 0; i < g->n_opsets; i++)
		free(g->opsets[i].domain);
	free(g->opsets);
	pb_strmap_free(g->node_index);
	pb_strmap_free(g->tensor_index);
	if (g->userdata && g->userdata_free)
		g->userdata_free(g->userdata);
	free(g->path);
	free(g->name);
	free(g->format);
	free(g->stated_cost);
	pool_free(g->pool);
	free(g);
}

/* ---------------------------------------------------------------- overrides */

int pb_parse_input_override(const char *spec, pb_input_override *out, pb_error *err)
{
	memset(out, 0, sizeof *out);
	const char *eq = strchr(spec, '=');
	if (!eq || eq == spec || !eq[1])
		return pb_err(err, PB_EUSAGE,
		              "--input '%s': expected NAME=D1,D2,... (e.g. input=1,3,224,224)",
		              spec);
	out->name = strndup(spec, (size_t)(eq - spec));
	const char *p = eq + 1;
	while (*p) {
		char *end;
		errno = 0;
		long long d = strtoll(p, &end, 10);
		/* Dims above 2^40 would leave every shape product unknown (the shape
		 * rules' overflow bound); say so instead. */
		if (end == p || d < 0 || d > PB_INPUT_DIM_MAX || errno == ERANGE ||
		    out->rank >= PB_MAX_RANK || (*end && *end != ',')) {
			pb_input_override_free(out);
			return pb_err(
			    err, PB_EUSAGE,
			    "--input '%s': dims must be integers from 0 to 2^40 separated by "
			    "commas (at most %d)",
			    spec, PB_MAX_RANK);
		}
		out->dims[out->rank++] = d;
		p = *end ? end + 1 : end;
	}
	return PB_OK;
}

void pb_input_override_free(pb_input_override *o)
{
	free(o->name);
	o->name = NULL;
}
