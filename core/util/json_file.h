/*
 * json_file.h — a jansson value written to a file atomically (through
 * util/atomic_file.h), with a final newline. Plans, sessions, graphs and
 * reports are saved this way.
 */
#ifndef PB_UTIL_JSON_FILE_H
#define PB_UTIL_JSON_FILE_H

#include <jansson.h>
#include <stddef.h>

#include "util/error.h"

/* JSON_INDENT(1) | JSON_REAL_PRECISION(12). */
int pb_json_save_atomic(json_t *j, const char *path, pb_error *err);
/* The same with explicit json_dumpf flags (graphs need 17 digits to
 * round-trip). */
int pb_json_save_atomic_flags(json_t *j, const char *path, size_t flags, pb_error *err);

#endif
