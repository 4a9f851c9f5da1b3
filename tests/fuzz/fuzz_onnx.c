/* fuzz_onnx.c — libFuzzer target for the ONNX loader: any byte string must
 * give either a graph or a clear error, never a crash, leak or UB (shape
 * inference and costs run on whatever loads). Seeds: tests/fuzz/seeds/fuzz_onnx. */
#include <stddef.h>
#include <stdint.h>

#include "model/graph.h"
#include "load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pb_graph *g = NULL;
	pb_error err = {0};
	if (pb_onnx_load_buffer(data, size, "fuzz.onnx", NULL, &g, &err) == PB_OK)
		pb_graph_free(g);
	return 0;
}
