/*
 * json_file.c — see json_file.h.
 */
#include "util/json_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/atomic_file.h"

int pb_json_save_atomic(json_t *j, const char *path, pb_error *err)
{
	return pb_json_save_atomic_flags(j, path, JSON_INDENT(1) | JSON_REAL_PRECISION(12), err);
}

typedef struct {
	json_t *j;
	size_t flags;
	const char *path;
} dump_ctx;

/* Streams the text straight into the temporary (a 100 MB graph needs no
 * second copy in memory). */
static int dump(void *ctx, FILE *f, const char *tmp_path, pb_error *err)
{
	const dump_ctx *d = ctx;
	if (json_dumpf(d->j, f, d->flags) != 0 || fputc('\n', f) == EOF)
		return pb_err(err, PB_EINPUT, "%s: write failed: %s", d->path,
		              strerror(errno ? errno : EIO));
	return PB_OK;
}

int pb_json_save_atomic_flags(json_t *j, const char *path, size_t flags, pb_error *err)
{
	dump_ctx d = {j, flags, path};
	return pb_write_file_atomic_with(path, dump, &d, err);
}
