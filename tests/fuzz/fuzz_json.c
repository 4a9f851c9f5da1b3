/*
 * fuzz_json.c — libFuzzer target for partbench's JSON graph loader.
 *
 * Feeds arbitrary bytes to pb_json_graph_load_buffer; accepted graphs are
 * walked through the graph queries (edges, lookups, attributes, shapes).
 * Seeds: tests/fuzz/seeds/fuzz_json/ (files written by `partbench convert`).
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_graph.h"
#include "fuzz_target.h"
#include "load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pb_graph *g = NULL;
	pb_error err = {0};
	pb_load_opts opts = {0};
	if (pb_json_graph_load_buffer((const char *)data, size, "fuzz.json", &opts, &g, &err) !=
	    PB_OK)
		return 0;
	(void)fuzz_walk_graph(g);
	pb_graph_free(g);
	return 0;
}
