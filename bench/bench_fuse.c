/*
 * bench_fuse.c — partbench's parallel-branch fusion against the conservative
 * XLA-style rule (fuse only producers whose single consumer is the same
 * node), on the bundled models; prints a Markdown table for bench/RESULTS.md.
 *
 * Usage: bench_fuse [MODEL.onnx ...]   (default: googlenet, densenet121,
 * swin_t, then the other bundled models). Run from the repository root.
 * Both modes are measured: constants folded (the default of `partbench
 * fuse`) and --keep-constants (every node is a kernel, the method's literal
 * reading). Times: the fastest of 5 runs of pb_fuse_run (search + fusion +
 * igraph check after every fusion + building the new graph).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/graph.h"
#include "load.h"
#include "transform/fuse.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int bench_one(const char *path, int keep_constants)
{
	pb_graph *g = NULL;
	pb_error err = {0};
	if (pb_graph_load(path, NULL, &g, &err) != PB_OK) {
		fprintf(stderr, "bench_fuse: %s\n", err.msg);
		return 1;
	}
	pb_fuse_opts o;
	pb_fuse_opts_default(&o);
	o.keep_constants = keep_constants;
	pb_fuse_result *r = NULL;
	double best = 1e30;
	for (int rep = 0; rep < 5; rep++) {
		pb_fuse_result_free(r);
		r = NULL;
		double t0 = now();
		if (pb_fuse_run(g, &o, &r, &err) != PB_OK) {
			fprintf(stderr, "bench_fuse: %s: %s\n", path, err.msg);
			pb_graph_free(g);
			return 1;
		}
		double t = now() - t0;
		if (t < best)
			best = t;
	}
	pb_fuse_baseline xb;
	if (pb_fuse_xla_baseline(g, &o, &xb, &err) != PB_OK) {
		fprintf(stderr, "bench_fuse: %s\n", err.msg);
		pb_fuse_result_free(r);
		pb_graph_free(g);
		return 1;
	}
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	char kinds[160] = "";
	for (int k = 0; k < PB_BRANCH_NKINDS; k++) {
		char one[32];
		snprintf(one, sizeof one, "%s%d", k ? "/" : "", r->groups->per_kind[k]);
		strcat(kinds, one);
	}
	printf("| %s | %s | %d | %d | %s | %d (%d) | %d (%d) | %+d (x%.2f) | %d -> %d | %d | "
	       "%.3f -> %.3f | %.3f -> %.3f | %d | %.1f |\n",
	       base, keep_constants ? "keep" : "fold", g->n_nodes - r->n_folded, r->groups->n,
	       kinds, r->nodes_fused, r->candidates, xb.fused, xb.candidates,
	       r->nodes_fused - xb.fused, xb.fused ? (double)r->nodes_fused / xb.fused : 0.0,
	       r->launches_before, r->launches_after, xb.launches_after, r->time_before * 1e3,
	       r->time_after * 1e3, r->time_before * 1e3, xb.time_after * 1e3, r->dag_checks,
	       best * 1e3);
	pb_fuse_result_free(r);
	pb_graph_free(g);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dflt[] = {"models/googlenet.onnx",     "models/densenet121.onnx",
	                      "models/swin_t.onnx",        "models/resnet18.onnx",
	                      "models/mobilenet_v2.onnx",  "models/squeezenet1_1.onnx",
	                      "models/bert_base_like.onnx"};
	const char **models = argc > 1 ? (const char **)(argv + 1) : dflt;
	int n = argc > 1 ? argc - 1 : (int)(sizeof dflt / sizeof *dflt);
	printf("| model | constants | kernels | groups | kinds pc/p/c/src/sink/local | partbench "
	       "fused (candidates) | XLA-style fused (candidates) | difference | launches "
	       "partbench | launches XLA | time partbench (ms) | time XLA (ms) | igraph checks | "
	       "fuse run (ms) |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	int rc = 0;
	for (int i = 0; i < n; i++) {
		rc |= bench_one(models[i], 0);
		rc |= bench_one(models[i], 1);
	}
	return rc;
}
