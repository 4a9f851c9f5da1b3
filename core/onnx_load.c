/* onnx_load.c — placeholder until the ONNX loader lands (issue 2). */
#include "graph.h"

int pb_onnx_load(const char *path, const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	(void)opts;
	*out = NULL;
	return pb_err(err, PB_EINPUT, "%s: ONNX loading is not built yet", path);
}

int pb_onnx_load_buffer(const void *data, size_t len, const char *name,
			const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	(void)data; (void)len; (void)opts;
	*out = NULL;
	return pb_err(err, PB_EINPUT, "%s: ONNX loading is not built yet", name);
}
