/* fuzz_onnx.c — libFuzzer target for the ONNX loader: any byte string must
 * give either a graph or a clear error, never a crash, leak or UB (shape
 * inference and costs run on whatever loads, which is then walked as in
 * fuzz_graph.h). Seeds: tests/fuzz/seeds/fuzz_onnx. */
#include <stddef.h>
#include <stdint.h>

/* UB stops the run (fuzz_target.h). seeds/fuzz_onnx/ub_attr_empty_floats.onnx
 * reproduces the one it found: an empty packed float list added a zero
 * offset to a NULL pointer in onnx_wire.c's attr_decode (fixed). */
#include "fuzz_graph.h"
#include "fuzz_target.h"
#include "load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pb_graph *g = NULL;
	pb_error err = {0};
	if (pb_onnx_load_buffer(data, size, "fuzz.onnx", NULL, &g, &err) != PB_OK)
		return 0;
	(void)fuzz_walk_graph(g);
	pb_graph_free(g);
	return 0;
}
