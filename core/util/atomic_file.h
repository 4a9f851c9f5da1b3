/*
 * atomic_file.h — write a whole file so that a crash never leaves a
 * half-written one. The data goes to a new temporary file created beside the
 * target with O_CREAT|O_EXCL|O_NOFOLLOW (".NAME.pb-PID-RANDOM.tmp": a link
 * planted at a predictable name cannot redirect the write), is flushed and
 * fsynced, and is then renamed over PATH. Plans, sessions, graphs, SVGs,
 * plots, LP files and shard task lists are all written this way.
 *
 * What PATH may be:
 *   missing or a regular file  replaced atomically (an existing file keeps its
 *                              permission bits);
 *   a link to a regular file   the link stays, its target is replaced;
 *   a dangling link            refused (creating a file where a link points is
 *                              how a planted link redirects writes);
 *   a directory                refused;
 *   a device, FIFO or socket   written in place, never replaced (-o /dev/null,
 *                              /dev/stdout);
 *   the open model             refused when a protected-path hook says so;
 *   ""                         refused ("the output path is empty").
 * Temporaries left by a killed process (its PID no longer runs) are removed
 * by the next write to the same target.
 */
#ifndef PB_ATOMIC_FILE_H
#define PB_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "util/error.h"

/* Writes len bytes of data to path atomically. On failure PATH is untouched,
 * the temporary is removed and err names the path and the system's reason. */
int pb_write_file_atomic(const char *path, const char *data, size_t len, pb_error *err);

/* A streaming writer: writes the contents either to f or, for libraries that
 * only take a file name (glp_write_lp), to tmp_path, which names the same
 * freshly created file (for an in-place write, PATH itself). Returns PB_OK or
 * an error code with err filled. */
typedef int (*pb_atomic_writer)(void *ctx, FILE *f, const char *tmp_path, pb_error *err);

/* Runs write on a new temporary beside PATH, then flushes, fsyncs and renames
 * it over PATH (same rules as pb_write_file_atomic). If the writer fails or
 * the temporary was swapped for another file meanwhile, PATH is untouched. */
int pb_write_file_atomic_with(const char *path, pb_atomic_writer write, void *ctx, pb_error *err);

/* The path of a file no write may replace (the open model), or NULL. The
 * front end registers it; checked by inode, so links and other spellings of
 * the same file are caught too. */
typedef const char *(*pb_protected_path_fn)(void *ctx);
void pb_atomic_file_protect(pb_protected_path_fn fn, void *ctx);

/* PB_EUSAGE with err filled when path is the protected file (the open model),
 * else PB_OK: the check every writer makes (util/file_door.h's too). */
int pb_atomic_file_check_protected(const char *path, pb_error *err);

/* 1 when a and b both exist and are the same file (device and inode, links
 * followed): for commands that refuse to write over the file they read. */
int pb_same_file(const char *a, const char *b);

#endif
