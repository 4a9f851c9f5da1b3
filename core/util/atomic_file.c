/*
 * atomic_file.c — see atomic_file.h.
 */
#include "util/atomic_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A path that exists and is not a regular file (/dev/null, /dev/stdout, a
 * FIFO) is written in place: renaming PATH.tmp over it would replace the
 * device itself with a regular file (as root, -o /dev/null did exactly that
 * to the machine's /dev/null). */
static int write_in_place(const char *path, const char *data, size_t len, pb_error *err)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return pb_err(err, PB_EINPUT, "%s: cannot write: %s", path, strerror(errno));
	int bad = fwrite(data, 1, len, f) != len;
	bad |= fclose(f) != 0;
	if (bad)
		return pb_err(err, PB_EINPUT, "%s: write failed: %s", path,
		              strerror(errno ? errno : EIO));
	return PB_OK;
}

static int write_atomic(const char *path, const char *data, size_t len, pb_error *err);

/* A symbolic link is followed: its target is replaced atomically and the
 * link stays (renaming over the link would turn it into a regular file). */
int pb_write_file_atomic(const char *path, const char *data, size_t len, pb_error *err)
{
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return write_in_place(path, data, len, err);
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		char *target = realpath(path, NULL);
		if (target) {
			int rc = write_atomic(target, data, len, err);
			if (rc)
				pb_err_prefix(err, "%s", path);
			free(target);
			return rc;
		}
	}
	return write_atomic(path, data, len, err);
}

static int write_atomic(const char *path, const char *data, size_t len, pb_error *err)
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
