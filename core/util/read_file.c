/*
 * read_file.c — see read_file.h. The buffer doubles from 64 KiB, so a file
 * costs O(log size) reallocations; a read error (EISDIR for a directory)
 * is reported instead of being taken for an empty file.
 */
#include "util/read_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/file_door.h"

int pb_read_file(const char *path, pb_door_kind kind, size_t max, const char *what, char **out,
                 size_t *len, pb_error *err)
{
	*out = NULL;
	*len = 0;
	FILE *f = pb_door_fopen_read(path, kind, what, err);
	if (!f)
		return err ? err->code : PB_EINPUT;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	int rc = buf ? PB_OK : pb_err(err, PB_ENOMEM, "%s: out of memory", path);
	while (rc == PB_OK) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		if (max && cap >= max) {
			rc = pb_err(err, PB_EINPUT, "%s: %s larger than %zu MiB", path, what,
			            max >> 20);
			break;
		}
		char *nb = realloc(buf, cap * 2 + 1);
		if (!nb) {
			rc = pb_err(err, PB_ENOMEM, "%s: out of memory", path);
			break;
		}
		buf = nb;
		cap *= 2;
	}
	if (rc == PB_OK && ferror(f))
		rc = pb_err(err, PB_EINPUT, "%s: read error: %s", path,
		            strerror(errno ? errno : EIO));
	fclose(f);
	if (rc != PB_OK) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return PB_OK;
}
