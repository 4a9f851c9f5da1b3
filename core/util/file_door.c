/*
 * file_door.c — see file_door.h. A read opens with O_RDONLY | O_NONBLOCK |
 * O_CLOEXEC (O_NONBLOCK makes the open of a FIFO return at once instead of
 * waiting for a writer), checks the descriptor is a regular file, then clears
 * O_NONBLOCK. Reads of the running command sit on a small stack (the first
 * 256 are remembered; later ones are not guarded, which only loses a
 * refusal, never a read).
 */
#include "util/file_door.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/atomic_file.h"

#define DOOR_READS 256

typedef struct {
	dev_t dev;
	ino_t ino;
	const char *what; /* a string literal of the caller */
} door_read;

static door_read reads[DOOR_READS];
static int n_reads;
static int script_depth;
static int command_depth; /* reads are remembered only inside a command */

static const char *const kind_names[] = {"", "model", "lua", "json", "data"};
static const char *const kind_exts[][5] = {
    /* any */ {NULL},
    /* model */ {".onnx", ".dot", ".gv", ".json", NULL},
    /* lua */ {".lua", NULL},
    /* json */ {".json", NULL},
    /* data */ {".json", ".jsonl", ".log", ".ckpt", NULL},
};

pb_door_kind pb_door_kind_named(const char *name)
{
	for (int k = 1; k < (int)(sizeof kind_names / sizeof *kind_names); k++)
		if (name && !strcmp(name, kind_names[k]))
			return (pb_door_kind)k;
	return PB_DOOR_ANY;
}

const char *pb_door_kind_list(pb_door_kind kind)
{
	switch (kind) {
	case PB_DOOR_MODEL:
		return ".onnx, .dot, .gv or JSON";
	case PB_DOOR_LUA:
		return ".lua";
	case PB_DOOR_JSON:
		return "JSON";
	case PB_DOOR_DATA:
		return "JSON, .jsonl, .log or .ckpt";
	default:
		return "regular";
	}
}

static const char *mode_name(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
	                     : "not a regular file";
}

/* Opens a regular file without blocking; -1 with errno, or with *mode set to
 * the file's type (errno 0) when it is not a regular file. */
static int open_regular(const char *path, mode_t *mode, struct stat *st)
{
	*mode = 0;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		int e = errno;
		*mode = S_ISREG(st->st_mode) ? 0 : st->st_mode;
		close(fd);
		errno = *mode ? 0 : e;
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

static int has_ext(pb_door_kind kind, const char *path)
{
	size_t lp = strlen(path);
	for (int e = 0; kind_exts[kind][e]; e++) {
		size_t le = strlen(kind_exts[kind][e]);
		if (lp > le && !strcasecmp(path + lp - le, kind_exts[kind][e]))
			return 1;
	}
	return 0;
}

int pb_door_kind_ok(pb_door_kind kind, const char *path)
{
	if (!path)
		return 0;
	if (kind == PB_DOOR_ANY)
		return 1;
	struct stat st;
	int exists = stat(path, &st) == 0;
	/* devices, FIFOs and folders: a read could block or never end */
	if (exists && !S_ISREG(st.st_mode))
		return 0;
	if (has_ext(kind, path))
		return 1;
	/* JSON inputs may have any name when they hold one JSON document: its
	 * bytes are then data that partbench reads anyway, not a secret text
	 * quoted back by a parse error */
	if (kind == PB_DOOR_LUA || !exists || st.st_size >= (64 << 20))
		return 0;
	mode_t m;
	int fd = open_regular(path, &m, &st);
	if (fd < 0)
		return 0;
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return 0;
	}
	json_error_t je;
	json_t *j = json_loadf(f, 0, &je);
	fclose(f);
	json_decref(j);
	return j != NULL;
}

static void remember(const struct stat *st, const char *what)
{
	if (command_depth > 0 && n_reads < DOOR_READS)
		reads[n_reads++] = (door_read){st->st_dev, st->st_ino, what};
}

int pb_door_open_read(const char *path, pb_door_kind kind, const char *what, pb_error *err)
{
	if (!path || !path[0]) {
		pb_err(err, PB_EUSAGE, "the %s path is empty", what);
		return -1;
	}
	if (script_depth > 0 && kind != PB_DOOR_ANY && !pb_door_kind_ok(kind, path)) {
		pb_err(err, PB_EUSAGE,
		       "%s: scripts read only %s files as the %s, not this one (docs/lua-api.md, "
		       "Sandbox)",
		       path, pb_door_kind_list(kind), what);
		return -1;
	}
	mode_t m;
	struct stat st;
	int fd = open_regular(path, &m, &st);
	if (fd < 0) {
		if (m)
			pb_err(err, PB_EINPUT, "%s: the %s is %s, not a regular file", path, what,
			       mode_name(m));
		else
			pb_err(err, PB_EINPUT, "%s: cannot open the %s: %s", path, what,
			       strerror(errno ? errno : EIO));
		return -1;
	}
	remember(&st, what);
	return fd;
}

FILE *pb_door_fopen_read(const char *path, pb_door_kind kind, const char *what, pb_error *err)
{
	int fd = pb_door_open_read(path, kind, what, err);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		pb_err(err, PB_ENOMEM, "%s: cannot open the %s: %s", path, what, strerror(errno));
		close(fd);
	}
	return f;
}

json_t *pb_door_load_json(const char *path, size_t flags, pb_door_kind kind, const char *what,
                          json_error_t *je, pb_error *err)
{
	json_error_t local;
	if (!je)
		je = &local;
	memset(je, 0, sizeof *je);
	je->line = -1;
	FILE *f = pb_door_fopen_read(path, kind, what, err);
	if (!f)
		return NULL;
	json_t *j = json_loadf(f, flags, je);
	fclose(f);
	if (!j)
		pb_err(err, PB_EINPUT, "%s:%d:%d: %s", path, je->line, je->column, je->text);
	return j;
}

int pb_door_open_write(const char *path, int append, int read_too, const char *what, pb_error *err)
{
	if (!path || !path[0]) {
		pb_err(err, PB_EUSAGE, "the %s path is empty", what);
		return -1;
	}
	struct stat st;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			pb_err(err, PB_EUSAGE, "%s: the %s path is a directory", path, what);
			return -1;
		}
		for (int i = 0; i < n_reads; i++)
			if (reads[i].dev == st.st_dev && reads[i].ino == st.st_ino &&
			    strcmp(reads[i].what, what) != 0) {
				pb_err(err, PB_EUSAGE,
				       "%s: is the %s this command reads; refusing to write the %s "
				       "over it (write elsewhere)",
				       path, reads[i].what, what);
				return -1;
			}
	}
	/* the open model, also when it was opened before this command */
	pb_error guard;
	if (pb_atomic_file_check_protected(path, &guard)) {
		pb_err(err, PB_EUSAGE, "%s", guard.msg);
		return -1;
	}
	int fl = (read_too ? O_RDWR : O_WRONLY) | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
	         (append ? O_APPEND : O_TRUNC);
	int fd = open(path, fl, 0644);
	if (fd < 0) {
		pb_err(err, PB_EINPUT, "%s: cannot write the %s: %s", path, what,
		       errno == ENXIO ? "a FIFO with no reader" : strerror(errno));
		return -1;
	}
	struct stat fs = {0};
	if (read_too && (fstat(fd, &fs) != 0 || !S_ISREG(fs.st_mode))) {
		/* a log that is read back (resumed) must hold its lines */
		pb_err(err, PB_EINPUT, "%s: the %s is %s, not a regular file", path, what,
		       mode_name(fs.st_mode));
		close(fd);
		return -1;
	}
	int cur = fcntl(fd, F_GETFL);
	if (cur >= 0)
		(void)fcntl(fd, F_SETFL, cur & ~O_NONBLOCK);
	return fd;
}

FILE *pb_door_fopen_write(const char *path, int append, const char *what, pb_error *err)
{
	int fd = pb_door_open_write(path, append, 0, what, err);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, append ? "ab" : "wb");
	if (!f) {
		pb_err(err, PB_ENOMEM, "%s: cannot write the %s: %s", path, what, strerror(errno));
		close(fd);
	}
	return f;
}

void pb_door_script_enter(void)
{
	script_depth++;
}

void pb_door_script_leave(void)
{
	if (script_depth > 0)
		script_depth--;
}

int pb_door_in_script(void)
{
	return script_depth > 0;
}

int pb_door_mark(void)
{
	command_depth++;
	return n_reads;
}

void pb_door_release(int mark)
{
	if (command_depth > 0)
		command_depth--;
	if (mark >= 0 && mark < n_reads)
		n_reads = mark;
}
