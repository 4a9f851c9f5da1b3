/*
 * atomic_file.c — see atomic_file.h.
 */
#include "atomic_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pb_write_file_atomic(const char *path, const char *data, size_t len, pb_error *err)
{
	size_t plen = strlen(path) + 8;
	char *tmp = malloc(plen);
	if (!tmp)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", path);
	snprintf(tmp, plen, "%s.tmp", path);
	FILE *f = fopen(tmp, "wb");
	if (!f) {
		int e = errno;
		free(tmp);
		return pb_err(err, PB_EINPUT, "%s: cannot write: %s", path, strerror(e));
	}
	int bad = fwrite(data, 1, len, f) != len;
	bad |= fflush(f) != 0;
	bad |= fsync(fileno(f)) != 0;
	bad |= fclose(f) != 0;
	if (bad || rename(tmp, path) != 0) {
		int e = errno;
		unlink(tmp);
		free(tmp);
		return pb_err(err, PB_EINPUT, "%s: write failed: %s", path, strerror(e ? e : EIO));
	}
	free(tmp);
	return PB_OK;
}
