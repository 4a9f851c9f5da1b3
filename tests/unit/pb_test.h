/*
 * pb_test.h — shared helpers for the cmocka unit tests.
 * Tests run with the repository root as working directory (see CMakeLists).
 */
#ifndef PB_TEST_H
#define PB_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/graph.h"
#include "load.h"

/* Builds a small graph from an edge list "a>b b>c" with given per-node MACs.
 * Nodes are named n0..n{n-1} in file order; each produces tensor t{i}. */
static inline pb_graph *pb_test_chain_graph(int n, const double *macs, const char *edges)
{
	pb_builder *b = pb_builder_new("test", "test");
	int in = pb_builder_tensor(b, "x");
	pb_builder_input(b, in);
	for (int i = 0; i < n; i++) {
		char name[32], out[32];
		snprintf(name, sizeof name, "n%d", i);
		snprintf(out, sizeof out, "t%d", i);
		const char *ins[16];
		char inbuf[16][32];
		int k = 0;
		const char *p = edges;
		while (p && *p) {
			int from, to, used;
			if (sscanf(p, "%d>%d%n", &from, &to, &used) != 2)
				break;
			if (to == i && k < 16) {
				snprintf(inbuf[k], sizeof inbuf[k], "t%d", from);
				ins[k] = inbuf[k];
				k++;
			}
			p += used;
			while (*p == ' ')
				p++;
		}
		if (k == 0)
			ins[k++] = "x";
		const char *outs[1] = {out};
		int id = pb_builder_node(b, name, "Op", "", ins, k, outs, 1);
		pb_cost c = {macs ? macs[i] : 1.0, NAN, 0, NAN, 4, NAN};
		pb_builder_node_cost(b, id, &c);
	}
	pb_graph *g = NULL;
	pb_error err = {0};
	pb_load_opts opts = {0};
	if (pb_graph_build(b, &opts, &g, &err) != PB_OK) {
		fprintf(stderr, "pb_test_chain_graph: %s\n", err.msg);
		return NULL;
	}
	return g;
}

#endif
