/* dot_load.c — placeholder until the DOT loader lands (issue 2). */
#include "graph.h"

int pb_dot_load(const char *path, const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	(void)opts;
	*out = NULL;
	return pb_err(err, PB_EINPUT, "%s: DOT loading is not built yet", path);
}

int pb_dot_load_buffer(const char *text, size_t len, const char *name,
		       const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	(void)text; (void)len; (void)opts;
	*out = NULL;
	return pb_err(err, PB_EINPUT, "%s: DOT loading is not built yet", name);
}
