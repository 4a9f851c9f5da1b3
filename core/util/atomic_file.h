/*
 * atomic_file.h — write a whole file so that a crash never leaves a
 * half-written one: the data goes to PATH.tmp, is flushed and fsynced, and
 * then renamed over PATH. Plans, sessions, SVGs and plots are saved this way.
 * An existing PATH that is not a regular file (/dev/null, a FIFO) is written
 * in place instead, never replaced.
 */
#ifndef PB_ATOMIC_FILE_H
#define PB_ATOMIC_FILE_H

#include <stddef.h>

#include "util/error.h"

/* Writes len bytes of data to path atomically. On failure PATH is untouched,
 * PATH.tmp is removed and err names the path and the system's reason. */
int pb_write_file_atomic(const char *path, const char *data, size_t len, pb_error *err);

#endif
