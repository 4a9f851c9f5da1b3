/*
 * lp_file.c — see lp_file.h. glp_write_lp only takes a file name, so it is
 * given the temporary's name (pb_atomic_writer's tmp_path); atomic_file.c
 * checks that name still holds the file it created before renaming it.
 */
#include "util/lp_file.h"

#include <stdio.h>

#include "util/atomic_file.h"

typedef struct {
	glp_prob *P;
	const char *path;
} lp_out;

static int write_lp(void *ctx, FILE *f, const char *tmp_path, pb_error *err)
{
	const lp_out *o = ctx;
	(void)f;
	if (glp_write_lp(o->P, NULL, tmp_path) != 0)
		return pb_err(err, PB_EINPUT, "%s: cannot write the LP file", o->path);
	return PB_OK;
}

int pb_lp_write_atomic(glp_prob *P, const char *path, pb_error *err)
{
	lp_out o = {P, path};
	return pb_write_file_atomic_with(path, write_lp, &o, err);
}
