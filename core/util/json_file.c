/*
 * json_file.c — see json_file.h.
 */
#include "util/json_file.h"

#include <stdlib.h>
#include <string.h>

#include "util/atomic_file.h"

int pb_json_save_atomic(json_t *j, const char *path, pb_error *err)
{
	return pb_json_save_atomic_flags(j, path, JSON_INDENT(1) | JSON_REAL_PRECISION(12), err);
}

int pb_json_save_atomic_flags(json_t *j, const char *path, size_t flags, pb_error *err)
{
	char *text = json_dumps(j, flags);
	if (!text)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", path);
	size_t len = strlen(text);
	char *data = realloc(text, len + 2);
	if (!data) {
		free(text);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", path);
	}
	data[len] = '\n';
	data[len + 1] = '\0';
	int rc = pb_write_file_atomic(path, data, len + 1, err);
	free(data);
	return rc;
}
