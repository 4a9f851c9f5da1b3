/*
 * atomic_file.c — see atomic_file.h.
 *
 * The temporary's name is ".BASE.pb-PID-RANDOM.tmp" in the directory of the
 * file finally replaced (a link's target, not the link): same file system, so
 * rename() is atomic. It is opened O_CREAT|O_EXCL|O_NOFOLLOW: whatever an
 * attacker planted at that name makes the open fail (and another name is
 * tried), it is never followed. Before the rename the temporary is checked to
 * still be the file opened (a writer that reopens it by name, such as
 * glp_write_lp, could otherwise be redirected by a swap).
 */
#include "util/atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static pb_protected_path_fn protect_fn;
static void *protect_ctx;

void pb_atomic_file_protect(pb_protected_path_fn fn, void *ctx)
{
	protect_fn = fn;
	protect_ctx = ctx;
}

/* The longest basename kept in a temporary's name: the name must stay under
 * NAME_MAX with the prefix and suffix added. */
#define BASE_KEEP 200

/* dir and base of path ("x" → "." and "x"). Both malloc'ed. */
static int split_path(const char *path, char **dir, char **base)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		*dir = strdup(".");
		*base = strdup(path);
	} else {
		size_t dl = slash == path ? 1 : (size_t)(slash - path);
		*dir = strndup(path, dl);
		*base = strdup(slash + 1);
	}
	if (!*dir || !*base) {
		free(*dir);
		free(*base);
		return -1;
	}
	if (strlen(*base) > BASE_KEEP)
		(*base)[BASE_KEEP] = '\0';
	return 0;
}

static uint64_t random64(void)
{
	uint64_t r = 0;
	if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
		static uint64_t counter;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		r = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^
		    ((uint64_t)getpid() << 40) ^ (++counter * 0x9E3779B97F4A7C15ull);
	}
	return r;
}

/* Removes ".BASE.pb-PID-*.tmp" files of dir whose PID no longer runs: what a
 * process killed mid-write (kill -9, power loss) left behind. Only regular
 * files owned by this user are touched; a PID that runs (maybe reused) keeps
 * its file. */
static void remove_stale(const char *dir, const char *base)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	size_t bl = strlen(base);
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		if (n[0] != '.' || strncmp(n + 1, base, bl) != 0 ||
		    strncmp(n + 1 + bl, ".pb-", 4) != 0)
			continue;
		const char *p = n + 1 + bl + 4;
		char *end;
		errno = 0;
		long pid = strtol(p, &end, 10);
		size_t rest = strlen(end);
		if (errno || pid <= 0 || pid > INT_MAX || end == p || *end != '-' || rest < 5 ||
		    strcmp(end + rest - 4, ".tmp") != 0)
			continue;
		if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		struct stat st;
		if (fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    st.st_uid == getuid())
			unlinkat(dirfd(d), n, 0);
	}
	closedir(d);
}

/* Creates a new temporary for base in dir: fills tmp (malloc'ed) and returns
 * the descriptor, or -1 with errno set. */
static int make_temp(const char *dir, const char *base, char **tmp)
{
	size_t len = strlen(dir) + strlen(base) + 64;
	*tmp = malloc(len);
	if (!*tmp) {
		errno = ENOMEM;
		return -1;
	}
	for (int attempt = 0; attempt < 64; attempt++) {
		snprintf(*tmp, len, "%s/.%s.pb-%ld-%016llx.tmp", dir, base, (long)getpid(),
		         (unsigned long long)random64());
		int fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

/* A path that exists and is not a regular file (/dev/null, /dev/stdout, a
 * FIFO) is written in place: renaming a temporary over it would replace the
 * device itself with a regular file (as root, -o /dev/null did exactly that
 * to the machine's /dev/null). */
static int write_in_place(const char *path, pb_atomic_writer write, void *ctx, pb_error *err)
{
	/* O_NONBLOCK: a FIFO without a reader fails at once (ENXIO) instead of
	 * blocking the open forever */
	int fd = open(path, O_WRONLY | O_TRUNC | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return pb_err(err, PB_EINPUT, "%s: cannot write: %s", path,
		              errno == ENXIO ? "a FIFO with no reader" : strerror(errno));
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	FILE *f = fdopen(fd, "wb");
	if (!f) {
		close(fd);
		return pb_err(err, PB_EINPUT, "%s: cannot write: %s", path, strerror(errno));
	}
	errno = 0;
	int rc = write(ctx, f, path, err);
	int e = errno;
	int bad = ferror(f);
	bad |= fclose(f) != 0;
	if (rc)
		return rc;
	if (bad)
		return pb_err(err, PB_EINPUT, "%s: write failed: %s", path,
		              strerror(e       ? e
		                       : errno ? errno
		                               : EIO));
	return PB_OK;
}

/* Writes through a temporary in the directory of target, then renames it
 * over target. shown is the path the user gave (for messages). */
static int write_replace(const char *target, const char *shown, pb_atomic_writer write, void *ctx,
                         pb_error *err)
{
	char *dir, *base, *tmp = NULL;
	if (split_path(target, &dir, &base) != 0)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", shown);
	remove_stale(dir, base);
	int fd = make_temp(dir, base, &tmp);
	if (fd < 0) {
		int e = errno;
		int rc = pb_err(err, PB_EINPUT, "%s: cannot create a temporary file in %s: %s",
		                shown, dir, strerror(e));
		free(tmp);
		free(dir);
		free(base);
		return rc;
	}
	free(base);
	struct stat old;
	if (stat(target, &old) == 0 && S_ISREG(old.st_mode))
		(void)fchmod(fd, old.st_mode & 07777);
	FILE *f = fdopen(fd, "wb");
	if (!f) {
		int e = errno;
		close(fd);
		unlink(tmp);
		free(tmp);
		free(dir);
		return pb_err(err, PB_EINPUT, "%s: cannot write: %s", shown, strerror(e));
	}
	errno = 0;
	int rc = write(ctx, f, tmp, err);
	int e = rc ? 0 : errno;
	int bad = ferror(f) != 0;
	bad |= fflush(f) != 0;
	if (!bad) {
		struct stat a, b;
		/* still our file under that name (a writer given tmp_path reopened
		 * it by name) */
		if (fstat(fd, &a) != 0 || lstat(tmp, &b) != 0 || a.st_dev != b.st_dev ||
		    a.st_ino != b.st_ino || !S_ISREG(b.st_mode)) {
			if (!rc)
				rc = pb_err(
				    err, PB_EINPUT,
				    "%s: the temporary file %s was replaced while being written",
				    shown, tmp);
			fclose(f);
			/* not ours any more: leave whatever is there */
			free(tmp);
			free(dir);
			return rc;
		}
		bad |= fsync(fd) != 0;
	}
	if (bad && !e)
		e = errno;
	bad |= fclose(f) != 0;
	if (bad && !e)
		e = errno;
	if (!rc && !bad && rename(tmp, target) != 0) {
		bad = 1;
		e = errno;
	}
	if (rc || bad) {
		unlink(tmp);
		free(tmp);
		free(dir);
		return rc ? rc
		          : pb_err(err, PB_EINPUT, "%s: write failed: %s", shown,
		                   strerror(e ? e : EIO));
	}
	free(tmp);
	/* the rename itself survives a crash once the directory is synced */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	free(dir);
	return PB_OK;
}

int pb_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int pb_atomic_file_check_protected(const char *path, pb_error *err)
{
	const char *model = protect_fn ? protect_fn(protect_ctx) : NULL;
	if (model && pb_same_file(path, model))
		return pb_err(
		    err, PB_EUSAGE,
		    "%s: is the open model %s; refusing to overwrite it (write elsewhere)", path,
		    model);
	return PB_OK;
}

int pb_write_file_atomic_with(const char *path, pb_atomic_writer write, void *ctx, pb_error *err)
{
	if (!path || !*path)
		return pb_err(err, PB_EUSAGE, "the output path is empty");
	int rc = pb_atomic_file_check_protected(path, err);
	if (rc)
		return rc;
	struct stat st;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return pb_err(err, PB_EINPUT, "%s: is a directory", path);
		if (!S_ISREG(st.st_mode))
			return write_in_place(path, write, ctx, err);
	}
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		/* A link is followed: its target is replaced and the link stays
		 * (renaming over the link would turn it into a regular file). */
		char *target = realpath(path, NULL);
		if (!target) {
			char to[PATH_MAX];
			ssize_t n = readlink(path, to, sizeof to - 1);
			to[n > 0 ? n : 0] = '\0';
			return pb_err(
			    err, PB_EINPUT,
			    "%s: is a symbolic link to a missing file (%s); not followed: remove "
			    "the link or write elsewhere",
			    path, to);
		}
		rc = write_replace(target, path, write, ctx, err);
		free(target);
		return rc;
	}
	return write_replace(path, path, write, ctx, err);
}

typedef struct {
	const char *path, *data;
	size_t len;
} buffer;

static int write_buffer(void *ctx, FILE *f, const char *tmp_path, pb_error *err)
{
	const buffer *b = ctx;
	if (b->len && fwrite(b->data, 1, b->len, f) != b->len)
		return pb_err(err, PB_EINPUT, "%s: write failed: %s", b->path,
		              strerror(errno ? errno : EIO));
	return PB_OK;
}

int pb_write_file_atomic(const char *path, const char *data, size_t len, pb_error *err)
{
	buffer b = {path, data, len};
	return pb_write_file_atomic_with(path, write_buffer, &b, err);
}
