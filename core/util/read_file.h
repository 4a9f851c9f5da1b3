/*
 * read_file.h — a whole file read into memory (text loaders: DOT graphs, Lua
 * scripts and layouts), with errors that name the file.
 */
#ifndef PB_UTIL_READ_FILE_H
#define PB_UTIL_READ_FILE_H

#include <stddef.h>

#include "util/error.h"
#include "util/file_door.h"

/* Reads path into *out (through util/file_door.h: regular files only, of
 * kind under a script) (malloc'd, NUL-terminated; *len excludes the NUL).
 * max > 0 refuses a larger file ("PATH: WHAT larger than N MiB"); what names
 * the kind of file in that message. PB_EINPUT when the file cannot be opened
 * or read (a directory, an I/O error), PB_ENOMEM when memory runs out. */
int pb_read_file(const char *path, pb_door_kind kind, size_t max, const char *what, char **out,
                 size_t *len, pb_error *err);

#endif
