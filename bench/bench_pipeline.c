/*
 * bench_pipeline.c — time of the pipeline stage split (key-operator intervals
 * + MILP) for P stages, with the slowest stage and the cross-stage bytes.
 * usage: bench_pipeline MODEL P [P ...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "model/graph.h"
#include "load.h"
#include "shard/pipeline/pipeline_stages.h"
#include "shard/strategy/strategy_problem.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s MODEL P [P ...]\n", argv[0]);
		return 1;
	}
	pb_error err = {0};
	pb_graph *g = NULL;
	if (pb_graph_load(argv[1], NULL, &g, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	unsigned char *act = malloc((size_t)g->n_nodes + 1);
	double *cost = malloc(((size_t)g->n_nodes + 1) * sizeof(double));
	pb_strategy_problem_dynamic_nodes(g, act);
	int n_ops = 0;
	double total = 0;
	for (int v = 0; v < g->n_nodes; v++) {
		cost[v] = act[v] ? pb_strategy_problem_node_flops(g, &g->nodes[v]) : -1;
		n_ops += act[v];
		total += act[v] ? cost[v] : 0;
	}
	printf("model %s: %d nodes, %d operators, %.3f GFLOP\n", argv[1], g->n_nodes, n_ops,
	       total / 1e9);
	for (int i = 2; i < argc; i++) {
		int p = atoi(argv[i]);
		pb_pipe_split s;
		double t0 = now();
		if (pb_pipeline_stages_split_milp(g, cost, p, 0, 0, &s, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 2;
		}
		double t = now() - t0;
		printf(
		    "P=%d: %.3f s, MILP %ld cols x %ld rows, %d key ops, slowest stage %.3f GFLOP "
		    "(ideal %.3f), cross-stage %.3f MB%s\n",
		    p, t, s.cols, s.rows, s.n_key, s.max_cost / 1e9, total / p / 1e9,
		    s.cross_bytes / 1e6, s.optimal ? ", optimal" : "");
		pb_pipeline_stages_split_free(&s);
	}
	free(act);
	free(cost);
	pb_graph_free(g);
	return 0;
}
