/* json_io.c — placeholder until the JSON graph format lands (issue 2). */
#include "graph.h"

int pb_json_graph_load(const char *path, const pb_load_opts *opts, pb_graph **out,
		       pb_error *err)
{
	(void)opts;
	*out = NULL;
	return pb_err(err, PB_EINPUT, "%s: JSON graph loading is not built yet", path);
}

int pb_json_graph_load_buffer(const char *text, size_t len, const char *name,
			      const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	(void)text; (void)len; (void)opts;
	*out = NULL;
	return pb_err(err, PB_EINPUT, "%s: JSON graph loading is not built yet", name);
}

int pb_json_graph_save(const pb_graph *g, const char *path, pb_error *err)
{
	(void)g;
	return pb_err(err, PB_EINPUT, "%s: JSON graph saving is not built yet", path);
}
