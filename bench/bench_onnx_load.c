/*
 * bench_onnx_load.c — in-process speed of the ONNX loader: for each model,
 * the median CPU time of pb_onnx_load (decode + graph build + shape inference
 * with constant propagation + costs) and of pb_graph_free over R runs.
 * Complements bench/onnx_info_speed.sh, whose end-to-end figure includes
 * process start-up.
 *
 * usage: bench_onnx_load [RUNS] [MODEL...]   (default: 15 runs, models/ *.onnx)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/graph.h"
#include "load.h"

static double cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 15;
	static const char *dflt[] = {"models/resnet18.onnx",
	                             "models/googlenet.onnx",
	                             "models/mobilenet_v2.onnx",
	                             "models/squeezenet1_1.onnx",
	                             "models/squeezenet1_1-weights.onnx",
	                             "models/densenet121.onnx",
	                             "models/swin_t.onnx",
	                             "models/bert_base_like.onnx"};
	const char **models = argc > 2 ? (const char **)argv + 2 : dflt;
	int n_models = argc > 2 ? argc - 2 : (int)(sizeof dflt / sizeof *dflt);
	if (runs < 1)
		runs = 1;
	double *load = malloc((size_t)runs * sizeof *load), *fr = malloc((size_t)runs * sizeof *fr);
	printf("%-36s %6s %10s %10s %12s %10s\n", "model", "nodes", "load ms", "free ms",
	       "nodes/ms", "GMACs");
	for (int m = 0; m < n_models; m++) {
		pb_graph *g = NULL;
		pb_error err = {0};
		int nodes = 0;
		double macs = 0;
		for (int r = 0; r < runs; r++) {
			double t0 = cpu_ms();
			if (pb_onnx_load(models[m], NULL, &g, &err) != PB_OK) {
				fprintf(stderr, "%s\n", err.msg);
				return 2;
			}
			double t1 = cpu_ms();
			nodes = g->n_nodes;
			macs = g->total.macs;
			pb_graph_free(g);
			load[r] = t1 - t0;
			fr[r] = cpu_ms() - t1;
		}
		qsort(load, (size_t)runs, sizeof *load, cmp_double);
		qsort(fr, (size_t)runs, sizeof *fr, cmp_double);
		double lm = load[runs / 2];
		printf("%-36s %6d %10.2f %10.2f %12.0f %10.4f\n", models[m], nodes, lm,
		       fr[runs / 2], lm > 0 ? nodes / lm : 0, macs / 1e9);
	}
	free(load);
	free(fr);
	return 0;
}
