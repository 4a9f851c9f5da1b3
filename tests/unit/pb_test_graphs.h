/*
 * pb_test_graphs.h — graphs and partition problems that unit tests build in
 * code (included by pb_test.h, which every test includes).
 *
 * Edge lists are strings "0>1 0>2 1>3": node i reads the outputs t{from} of
 * the edges "from>i", or the graph input x when no edge leads to it. Node i
 * writes tensor t{i}.
 */
#ifndef PB_TEST_GRAPHS_H
#define PB_TEST_GRAPHS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/graph.h"
#include "load.h"
#include "partition/chain/chain_problem.h"
#include "partition/chain/manycore.h"

/* Every bundled model (paths under models/), for the tests that run on all
 * of them; *n gets their count. */
static inline const char *const *pb_test_models(size_t *n)
{
	static const char *const models[] = {"resnet18.onnx",     "googlenet.onnx",
	                                     "mobilenet_v2.onnx", "squeezenet1_1.onnx",
	                                     "densenet121.onnx",  "bert_base_like.onnx",
	                                     "swin_t.onnx",       "squeezenet1_1-weights.onnx",
	                                     "tiny_branches.dot"};
	*n = sizeof models / sizeof *models;
	return models;
}

/* Loads models/NAME (any format); a load error fails the test with the
 * loader's message. */
static inline pb_graph *pb_test_load_model(const char *name)
{
	char path[256];
	snprintf(path, sizeof path, "models/%s", name);
	pb_graph *g = NULL;
	pb_error err = {0};
	if (pb_graph_load(path, NULL, &g, &err) != PB_OK)
		fail_msg("%s", err.msg);
	return g;
}

/* The inputs of node i from the edge list: at most max names, written to
 * inbuf and pointed to by ins; "x" alone when no edge leads to i. Returns
 * their count. */
static inline int pb_test_edge_inputs(const char *edges, int i, char (*inbuf)[32], const char **ins,
                                      int max)
{
	int k = 0, from, to, used;
	const char *p = edges;
	while (p && sscanf(p, "%d>%d%n", &from, &to, &used) == 2) {
		if (to == i && k < max) {
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
	return k;
}

/* Builds a small graph from an edge list "a>b b>c" with given per-node MACs.
 * Nodes are named n0..n{n-1} in file order; each produces tensor t{i}.
 * Shapes are inferred (none are known); NULL (and a message) on error. */
static inline pb_graph *pb_test_chain_graph(int n, const double *macs, const char *edges)
{
	pb_builder *b = pb_builder_new("test", "test");
	int in = pb_builder_tensor(b, "x");
	pb_builder_input(b, in);
	for (int i = 0; i < n; i++) {
		char name[32], out[32], inbuf[16][32];
		const char *ins[16];
		snprintf(name, sizeof name, "n%d", i);
		snprintf(out, sizeof out, "t%d", i);
		int k = pb_test_edge_inputs(edges, i, inbuf, ins, 16);
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

/* A graph of elementwise-like kernels for fusion and backend mapping: node i
 * runs ops[i] (ops NULL: every node "Relu"), is named n{i} (letters: a, b,
 * ...) and writes t{i}, 1 x elems floats, as does the input x; its inputs
 * come from the edge list (at most 8). Costs: no MACs, `flops` FLOPs
 * (elems when flops <= 0), 4 * elems bytes out and 4 * elems per input.
 * The last node's output is the graph's output; shapes are stated, so
 * inference is skipped. A build error fails the test. */
static inline pb_graph *pb_test_ops_graph(const char *path, int n, const char *const *ops,
                                          const char *edges, int64_t elems, double flops,
                                          int letters)
{
	pb_builder *b = pb_builder_new(path, "test");
	int in = pb_builder_tensor(b, "x");
	pb_builder_input(b, in);
	int64_t dims[2] = {1, elems};
	pb_builder_set_shape(b, in, PB_DT_FLOAT, 2, dims, NULL);
	for (int i = 0; i < n; i++) {
		char name[16], out[16], inbuf[8][32];
		const char *ins[8];
		if (letters)
			snprintf(name, sizeof name, "%c", 'a' + i);
		else
			snprintf(name, sizeof name, "n%d", i);
		snprintf(out, sizeof out, "t%d", i);
		int k = pb_test_edge_inputs(edges, i, inbuf, ins, 8);
		const char *outs[1] = {out};
		int id = pb_builder_node(b, name, ops ? ops[i] : "Relu", "", ins, k, outs, 1);
		int t = pb_builder_tensor(b, out);
		pb_builder_set_shape(b, t, PB_DT_FLOAT, 2, dims, NULL);
		pb_cost c = {
		    0, flops > 0 ? flops : (double)elems, 0, 0, 4.0 * elems, 4.0 * elems * k};
		pb_builder_node_cost(b, id, &c);
		if (i == n - 1)
			pb_builder_output(b, t);
	}
	pb_graph *g = NULL;
	pb_error err = {0};
	pb_load_opts lo = {NULL, 0, 1};
	if (pb_graph_build(b, &lo, &g, &err) != PB_OK)
		fail_msg("%s", err.msg);
	return g;
}

/* The linear congruential generator of the partition tests' random
 * instances (15 bits per call). */
static inline unsigned pb_test_rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

/* A many-core chip for synthetic problems: mac_rate MAC/s and `memory`
 * bytes per core, routing at `bandwidth` B/s, reward -max(t) in ms (a = 1,
 * b = 0) minus `penalty` when the storage exceeds the memory. */
static inline pb_manycore pb_test_chip(const char *name, int cores, double mac_rate, double memory,
                                       double bandwidth, double penalty)
{
	pb_manycore h;
	memset(&h, 0, sizeof h);
	snprintf(h.name, sizeof h.name, "%s", name);
	h.cores = cores;
	h.mac_rate = mac_rate;
	h.memory = memory;
	h.bandwidth = bandwidth;
	h.reward_a = 1.0;
	h.penalty = penalty;
	return h;
}

/* A random chain of m <= 64 layers on chip h, each layer fed by the one
 * before and, one time in three, also by a random earlier one: MACs 1..1000
 * (with zero_macs, one layer in ten has none), parameters 0..499, output
 * bytes 1..100, all drawn from *seed with pb_test_rnd. */
static inline pb_part_problem *pb_test_random_problem(unsigned *seed, int m, const pb_manycore *h,
                                                      int zero_macs)
{
	double macs[64], par[64], ob[64];
	int from[128], to[128], ne = 0;
	assert_true(m >= 1 && m <= 64);
	for (int i = 0; i < m; i++) {
		if (zero_macs)
			macs[i] = (pb_test_rnd(seed) % 10 == 0) ? 0 : 1 + pb_test_rnd(seed) % 1000;
		else
			macs[i] = 1 + pb_test_rnd(seed) % 1000;
		par[i] = pb_test_rnd(seed) % 500;
		ob[i] = 1 + pb_test_rnd(seed) % 100;
		if (i > 0) {
			from[ne] = i - 1;
			to[ne++] = i;
		}
		if (i > 1 && pb_test_rnd(seed) % 3 == 0) {
			from[ne] = (int)(pb_test_rnd(seed) % (unsigned)(i - 1));
			to[ne++] = i;
		}
	}
	pb_part_problem *P = NULL;
	pb_error err = {0};
	assert_int_equal(pb_part_problem_synthetic(m, macs, par, ob, ne, from, to, h, &P, &err),
	                 PB_OK);
	return P;
}

#endif
