/*
 * bench_fuse_map.c — backend mapping on the bundled models with a hetero
 * layout: launches before/after aggregation, buffers, serial vs pipelined
 * time of a stream of inputs for 1..4 buffer slots, and the run time of
 * pb_map_run (fastest of 5). Prints a Markdown table for bench/RESULTS.md.
 * A second table sets the seed's priority rule beside the transfer-aware
 * choice (issue 18.5): launches, buffers, serial and pipelined (k = 2) time,
 * nodes moved and the mapping time of each (fastest of 5; the
 * transfer-aware run includes its priority baseline).
 *
 * Usage: bench_fuse_map [LAYOUT.lua [STREAM]]  (default layouts/hetero.lua, 16)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/graph.h"
#include "load.h"
#include "hw.h"
#include "transform/map.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* pb_map_run fastest of 5; the last result in *out. */
static double timed_run(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o,
                        pb_map_result **out, pb_error *err)
{
	double best = 1e30;
	*out = NULL;
	for (int rep = 0; rep < 5; rep++) {
		pb_map_result_free(*out);
		*out = NULL;
		double t0 = now();
		if (pb_map_run(g, h, o, out, err) != PB_OK)
			return -1;
		double t = now() - t0;
		if (t < best)
			best = t;
	}
	return best;
}

static void compare_table(const pb_hetero *h, const char *const *models, size_t nm, int stream)
{
	printf("\n| model | priority: launches / buffers | serial (ms) | pipelined k=2 (ms) | "
	       "map (ms) | transfer-aware: launches / buffers | serial (ms) | pipelined k=2 "
	       "(ms) | map (ms) | nodes moved | serial x | pipelined x |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	pb_error err = {0};
	for (size_t m = 0; m < nm; m++) {
		char path[128];
		snprintf(path, sizeof path, "models/%s.onnx", models[m]);
		pb_graph *g = NULL;
		if (pb_graph_load(path, NULL, &g, &err) != PB_OK) {
			fprintf(stderr, "bench_fuse_map: %s\n", err.msg);
			continue;
		}
		pb_map_opts po = {2, stream, 0, NULL, 0}, to = {2, stream, 0, NULL, 1};
		pb_map_result *p = NULL, *t = NULL;
		double tp = timed_run(g, h, &po, &p, &err);
		double tt = tp >= 0 ? timed_run(g, h, &to, &t, &err) : -1;
		if (tp < 0 || tt < 0) {
			fprintf(stderr, "bench_fuse_map: %s\n", err.msg);
		} else {
			int bp = 0, bt = 0;
			for (int e = 0; e < p->n_edges; e++)
				bp += p->edges[e].buffer;
			for (int e = 0; e < t->n_edges; e++)
				bt += t->edges[e].buffer;
			printf("| %s | %d / %d | %.3f | %.3f | %.2f | %d / %d | %.3f | %.3f | %.2f "
			       "| %d "
			       "| %.2f | %.2f |\n",
			       models[m], p->launches_after, bp, p->serial_time * 1e3,
			       p->pipelined_time * 1e3, tp * 1e3, t->launches_after, bt,
			       t->serial_time * 1e3, t->pipelined_time * 1e3, tt * 1e3,
			       t->kept_priority ? 0 : t->moved,
			       t->serial_time > 0 ? p->serial_time / t->serial_time : 0,
			       t->pipelined_time > 0 ? p->pipelined_time / t->pipelined_time : 0);
		}
		pb_map_result_free(p);
		pb_map_result_free(t);
		pb_graph_free(g);
	}
}

int main(int argc, char **argv)
{
	const char *layout = argc > 1 ? argv[1] : "layouts/hetero.lua";
	int stream = argc > 2 ? atoi(argv[2]) : 16;
	const char *models[] = {"resnet18",    "googlenet",      "mobilenet_v2", "squeezenet1_1",
	                        "densenet121", "bert_base_like", "swin_t"};
	pb_hw *hw = NULL;
	pb_error err = {0};
	pb_hetero *h = NULL;
	if (pb_hw_load(layout, &hw, &err) != PB_OK || pb_hetero_parse(hw, &h, &err) != PB_OK) {
		fprintf(stderr, "bench_fuse_map: %s\n", err.msg);
		pb_hw_free(hw);
		return 1;
	}
	printf("| model | mapped nodes | cpu/gpu/fpga nodes | launches | buffers | serial (ms, %d "
	       "inputs) | pipelined k=1/2/3/4 (ms) | throughput x (k=2) | map run (ms) |\n",
	       stream);
	printf("|---|---|---|---|---|---|---|---|---|\n");
	for (size_t m = 0; m < sizeof models / sizeof *models; m++) {
		char path[128];
		snprintf(path, sizeof path, "models/%s.onnx", models[m]);
		pb_graph *g = NULL;
		if (pb_graph_load(path, NULL, &g, &err) != PB_OK) {
			fprintf(stderr, "bench_fuse_map: %s\n", err.msg);
			continue;
		}
		pb_map_opts o = {2, stream, 0};
		pb_map_result *r = NULL;
		double best = 1e30;
		for (int rep = 0; rep < 5; rep++) {
			pb_map_result_free(r);
			r = NULL;
			double t0 = now();
			if (pb_map_run(g, h, &o, &r, &err) != PB_OK)
				break;
			double t = now() - t0;
			if (t < best)
				best = t;
		}
		if (!r) {
			fprintf(stderr, "bench_fuse_map: %s\n", err.msg);
			pb_graph_free(g);
			continue;
		}
		int count[PB_MAP_MAX_BACKENDS] = {0}, nbuf = 0;
		for (int v = 0; v < g->n_nodes; v++)
			if (r->backend[v] >= 0)
				count[r->backend[v]]++;
		for (int e = 0; e < r->n_edges; e++)
			nbuf += r->edges[e].buffer;
		char per[64] = "";
		for (int b = 0; b < h->n; b++) {
			char one[16];
			snprintf(one, sizeof one, "%s%d", b ? "/" : "", count[b]);
			strcat(per, one);
		}
		printf("| %s | %d | %s | %d -> %d | %d | %.3f | %.3f / %.3f / %.3f / %.3f | %.2f | "
		       "%.2f |\n",
		       models[m], g->n_nodes - r->n_folded, per, r->launches_before,
		       r->launches_after, nbuf, r->serial_time * 1e3, r->sweep[0] * 1e3,
		       r->sweep[1] * 1e3, r->sweep[2] * 1e3, r->sweep[3] * 1e3,
		       r->sweep[1] > 0 ? r->serial_time / r->sweep[1] : 0, best * 1e3);
		pb_map_result_free(r);
		pb_graph_free(g);
	}
	compare_table(h, models, sizeof models / sizeof *models, stream);
	pb_hetero_free(h);
	pb_hw_free(hw);
	return 0;
}
