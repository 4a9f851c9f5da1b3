/*
 * shard/cluster.c — cluster layouts and grouping schemes (cluster.h).
 *
 * Schemes: every ordered factorisation of the device count into factors >= 2
 * with at most max_axes factors, in lexicographic order of the factor list.
 * Mirror rule: the cost model sees an axis only through its size and its link,
 * and every operator chooses one spec per axis from the same menu, so two
 * orderings with the same multiset of (size, link) are the same problem with
 * renamed axes; the first one generated is kept, the others are reported as
 * dropped. Orderings whose axes land on different links (2x8 vs 8x2 on a
 * 2x8 cluster) are different problems and are both kept.
 */
#include "shard/cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pb_cluster_from_hw(const pb_hw *hw, pb_cluster *out, pb_error *err)
{
	memset(out, 0, sizeof *out);
	int rc = pb_hw_expect_kind(hw, "cluster", err);
	if (rc)
		return rc;
	const json_t *r = hw->root;
	long nodes, dpn;
	double mem, use, tf, eff, mbw, ibw, ilat, xbw, xlat, bucket;
	if ((rc = pb_hw_int(hw, r, "", "nodes", 1, 1, 1, 4096, &nodes, err)) ||
	    (rc = pb_hw_int(hw, r, "", "devices_per_node", 1, 1, 1, 1024, &dpn, err)) ||
	    (rc = pb_hw_num(hw, r, "", "device_memory_gb", 1, 0, 1e-6, 1e6, &mem, err)) ||
	    (rc = pb_hw_num(hw, r, "", "device_memory_usable", 0, PB_MEMORY_USABLE, 1e-6, 1, &use,
	                    err)) ||
	    (rc = pb_hw_num(hw, r, "", "device_tflops", 1, 0, 1e-6, 1e6, &tf, err)) ||
	    (rc = pb_hw_num(hw, r, "", "device_efficiency", 0, 1, 1e-6, 1, &eff, err)) ||
	    (rc = pb_hw_num(hw, r, "", "device_memory_bw_gbs", 0, 0, 1e-3, 1e6, &mbw, err)) ||
	    (rc = pb_hw_num(hw, r, "", "intra_bw_gbs", 1, 0, 1e-6, 1e6, &ibw, err)) ||
	    (rc = pb_hw_num(hw, r, "", "intra_latency_us", 0, 0, 0, 1e6, &ilat, err)) ||
	    (rc = pb_hw_num(hw, r, "", "inter_bw_gbs", nodes > 1, ibw, 1e-6, 1e6, &xbw, err)) ||
	    (rc = pb_hw_num(hw, r, "", "inter_latency_us", 0, ilat, 0, 1e6, &xlat, err)) ||
	    (rc = pb_hw_num(hw, r, "", "grad_bucket_mb", 0, PB_GRAD_BUCKET_MB, 0, 1e6, &bucket,
	                    err)))
		return rc;
	if (nodes * dpn > 65536)
		return pb_err(
		    err, PB_EINPUT,
		    "%s: fields 'nodes' x 'devices_per_node' = %ld is too large (max 65536)",
		    hw->path, nodes * dpn);
	out->name = strdup(hw->name);
	out->nodes = (int)nodes;
	out->devices_per_node = (int)dpn;
	out->n_devices = (int)(nodes * dpn);
	out->memory_device = mem * 1e9;
	out->memory_usable = use;
	out->memory = mem * 1e9 * use;
	out->peak_flops = tf * 1e12;
	out->efficiency = eff;
	out->flops = tf * 1e12 * eff;
	out->mem_bw = mbw * 1e9;
	out->intra.bw = ibw * 1e9;
	out->intra.latency = ilat * 1e-6;
	out->inter.bw = xbw * 1e9;
	out->inter.latency = xlat * 1e-6;
	out->grad_bucket = bucket * 1048576.0;
	out->p2p_overlap = 1;
	return PB_OK;
}

void pb_cluster_free(pb_cluster *c)
{
	if (c) {
		free(c->name);
		c->name = NULL;
	}
}

int pb_cluster_mesh_init(pb_mesh *m, const pb_cluster *c, const int *factors, int n, pb_error *err)
{
	memset(m, 0, sizeof *m);
	if (n < 1 || n > PB_MESH_MAX_AXES)
		return pb_err(err, PB_EUSAGE, "scheme: between 1 and %d factors are supported",
		              PB_MESH_MAX_AXES);
	long prod = 1;
	for (int i = 0; i < n; i++) {
		if (factors[i] < 2 && !(n == 1 && factors[i] == 1))
			return pb_err(err, PB_EUSAGE, "scheme: factor %d must be >= 2", factors[i]);
		prod *= factors[i];
	}
	if (prod != c->n_devices)
		return pb_err(
		    err, PB_EUSAGE,
		    "scheme: the factors multiply to %ld, but the cluster '%s' has %d devices",
		    prod, c->name, c->n_devices);
	m->n_axes = n;
	long stride = 1;
	size_t off = 0;
	for (int i = n - 1; i >= 0; i--) {
		m->size[i] = factors[i];
		m->stride[i] = (int)stride;
		/* Groups of this axis are {base + k * stride}; they stay inside one node
		 * for every base exactly when stride x size divides the node size (a
		 * 4-axis on 6-device nodes would put devices 4..7 across two nodes). */
		m->inter[i] = c->devices_per_node % (stride * factors[i]) != 0;
		m->link[i] = m->inter[i] ? c->inter : c->intra;
		stride *= factors[i];
	}
	for (int i = 0; i < n; i++)
		off += (size_t)snprintf(m->name + off, sizeof m->name - off, "%s%d", i ? "x" : "",
		                        factors[i]);
	return PB_OK;
}

int pb_cluster_mesh_parse(pb_mesh *m, const pb_cluster *c, const char *text, pb_error *err)
{
	int f[PB_MESH_MAX_AXES], n = 0;
	const char *p = text;
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v < 1 || v > 65536 || n == PB_MESH_MAX_AXES)
			return pb_err(
			    err, PB_EUSAGE,
			    "--scheme '%s': expected factors like 4x4 or 2x8 (at most %d)", text,
			    PB_MESH_MAX_AXES);
		f[n++] = (int)v;
		p = end;
		if (*p == 'x' || *p == 'X' || *p == '*') {
			p++;
			if (!*p)
				return pb_err(
				    err, PB_EUSAGE,
				    "--scheme '%s': a factor is missing after the last 'x'", text);
		} else if (*p)
			return pb_err(err, PB_EUSAGE, "--scheme '%s': unexpected '%c'", text, *p);
	}
	if (n == 0)
		return pb_err(err, PB_EUSAGE, "--scheme: empty");
	int rc = pb_cluster_mesh_init(m, c, f, n, err);
	if (rc)
		pb_err_prefix(err, "--scheme '%s'", text);
	return rc;
}

/* Canonical key: axes sorted by (size, inter). */
static void mesh_key(const pb_mesh *m, int *key)
{
	int k[PB_MESH_MAX_AXES] = {0};
	for (int i = 0; i < m->n_axes; i++)
		k[i] = m->size[i] * 2 + m->inter[i];
	for (int i = 1; i < m->n_axes; i++)
		for (int j = i; j > 0 && k[j - 1] > k[j]; j--) {
			int t = k[j];
			k[j] = k[j - 1];
			k[j - 1] = t;
		}
	for (int i = 0; i < PB_MESH_MAX_AXES; i++)
		key[i] = i < m->n_axes ? k[i] : 0;
}

typedef struct flist {
	int f[PB_MESH_MAX_AXES];
	int n;
} flist;

typedef struct gen {
	flist *l;
	int n, cap, max_axes;
} gen;

static void rec(gen *g, int *f, int n, int rest)
{
	if (rest == 1) {
		if (n > 0 && g->n < g->cap) {
			memcpy(g->l[g->n].f, f, sizeof(int) * PB_MESH_MAX_AXES);
			g->l[g->n++].n = n;
		}
		return;
	}
	if (n == g->max_axes)
		return;
	for (int d = 2; d <= rest; d++)
		if (rest % d == 0) {
			f[n] = d;
			rec(g, f, n + 1, rest / d);
		}
}

static int cmp_flist(const void *a, const void *b)
{
	const flist *x = a, *y = b;
	if (x->n != y->n)
		return x->n - y->n;
	for (int i = 0; i < x->n; i++)
		if (x->f[i] != y->f[i])
			return x->f[i] - y->f[i];
	return 0;
}

int pb_cluster_mesh_schemes(const pb_cluster *c, int max_axes, pb_mesh *out, int cap,
                            char (*dropped)[64], int *n_dropped, int dropped_cap)
{
	if (n_dropped)
		*n_dropped = 0;
	if (max_axes < 1)
		max_axes = 1;
	if (max_axes > PB_MESH_MAX_AXES)
		max_axes = PB_MESH_MAX_AXES;
	if (c->n_devices == 1) {
		int one = 1;
		return cap > 0 && pb_cluster_mesh_init(&out[0], c, &one, 1, NULL) == PB_OK ? 1 : 0;
	}
	gen g = {calloc(4096, sizeof(flist)), 0, 4096, max_axes};
	if (!g.l)
		return 0;
	int f[PB_MESH_MAX_AXES] = {0};
	rec(&g, f, 0, c->n_devices);
	/* Fewer axes first, then lexicographic: 16, 2x8, 4x4, 8x2, 2x2x4 ... */
	qsort(g.l, (size_t)g.n, sizeof *g.l, cmp_flist);
	int n = 0;
	for (int i = 0; i < g.n && n < cap; i++) {
		pb_mesh m;
		if (pb_cluster_mesh_init(&m, c, g.l[i].f, g.l[i].n, NULL))
			continue;
		int key[PB_MESH_MAX_AXES], k2[PB_MESH_MAX_AXES], dup = -1;
		mesh_key(&m, key);
		for (int j = 0; j < n && dup < 0; j++) {
			if (out[j].n_axes != m.n_axes)
				continue;
			mesh_key(&out[j], k2);
			if (memcmp(key, k2, sizeof key) == 0)
				dup = j;
		}
		if (dup >= 0) {
			if (dropped && n_dropped && *n_dropped < dropped_cap)
				snprintf(dropped[(*n_dropped)++], 64, "%.30s=%.30s", m.name,
				         out[dup].name);
			continue;
		}
		out[n++] = m;
	}
	free(g.l);
	return n;
}
