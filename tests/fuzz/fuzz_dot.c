/*
 * fuzz_dot.c — libFuzzer target for the Graphviz DOT loader.
 *
 * Feeds arbitrary bytes to pb_dot_load_buffer; on success, walks the graph
 * through the queries the rest of partbench uses (edge bytes, lookups, shape
 * strings) so that malformed-but-accepted graphs are exercised too.
 * Seeds: tests/fuzz/seeds/fuzz_dot/.
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
	if (pb_dot_load_buffer((const char *)data, size, "fuzz.dot", &opts, &g, &err) != PB_OK)
		return 0;
	(void)fuzz_walk_graph(g);
	pb_graph_free(g);
	return 0;
}
