/*
 * file_door.h — the one door through which partbench opens a file named by a
 * user, a script or another file (a session's model and layout, a plan named
 * by a command, a profile, a log). Writes of whole files go through
 * util/atomic_file.h (which applies the same open-model guard); reads and
 * streaming writes (training and tuning logs) come here. tests/lint/
 * check_file_door.py fails when a file outside the door opens a path itself.
 *
 * Reads:
 *   - only regular files: the file is opened with O_NONBLOCK (a FIFO with no
 *     writer, a device or a directory never blocks the open), then checked on
 *     the descriptor (fstat), so what is read is what was checked;
 *   - while a script's command runs (pb_door_script_enter), the file must
 *     also be of the kind the read expects (pb_door_kind_ok): a script cannot
 *     make partbench read /etc/passwd as a session's model, a calibration
 *     profile or a layout and quote it back in an error;
 *   - each read is remembered (device, inode, role) until the command that
 *     made it ends (pb_door_mark / pb_door_release).
 * Streaming writes (pb_door_fopen_write) refuse: an empty path, a directory,
 * the open model (the hook of util/atomic_file.h), any file the current
 * command read in another role (`train M.onnx --log M.onnx`, also through a
 * link or a hard link), and never block on a FIFO without a reader.
 *
 * The state (script depth, reads of the running command) is per process and
 * follows the commands' nesting (a script's pb.cmd inside `run`).
 */
#ifndef PB_UTIL_FILE_DOOR_H
#define PB_UTIL_FILE_DOOR_H

#include <jansson.h>
#include <stdio.h>

#include "util/error.h"

/* What a read expects. Under a script, a file of another kind is refused
 * before its bytes are parsed. PB_DOOR_ANY: no kind (a file the model itself
 * names, such as ONNX external weights). */
typedef enum {
	PB_DOOR_ANY = 0,
	PB_DOOR_MODEL, /* .onnx, .dot, .gv, or JSON */
	PB_DOOR_LUA,   /* .lua */
	PB_DOOR_JSON,  /* plans, sessions, manifests: JSON */
	PB_DOOR_DATA   /* logs, profiles, checkpoints: JSON, .jsonl, .log, .ckpt */
} pb_door_kind;

/* The kind named as in a command's script .paths ("model", "lua", "json",
 * "data"); PB_DOOR_ANY for another name. */
pb_door_kind pb_door_kind_named(const char *name);
/* 1 when path is a regular file (or missing) with kind's extension, or, for
 * every kind but Lua, holds one JSON document. Never blocks: a FIFO, device
 * or directory is 0. */
int pb_door_kind_ok(pb_door_kind kind, const char *path);
/* "'.onnx, .dot, .gv or JSON'" and so on, for messages. */
const char *pb_door_kind_list(pb_door_kind kind);

/* Opens path for reading (see above). what names the file's role in
 * messages ("model", "session"): "PATH: cannot open the WHAT: REASON",
 * "PATH: the WHAT is a FIFO, not a regular file". Returns a descriptor
 * (O_CLOEXEC, blocking again) or -1 with err filled (PB_EINPUT; PB_EUSAGE for
 * a kind refused to a script). */
int pb_door_open_read(const char *path, pb_door_kind kind, const char *what, pb_error *err);
/* The same as a stdio stream ("rb"). */
FILE *pb_door_fopen_read(const char *path, pb_door_kind kind, const char *what, pb_error *err);
/* Parses path as JSON (jansson flags). On failure returns NULL with err filled:
 * "PATH: cannot open ..." or "PATH:LINE:COL: jansson's reason"; je (may be
 * NULL) holds jansson's error, line -1 when the file did not open. */
json_t *pb_door_load_json(const char *path, size_t flags, pb_door_kind kind, const char *what,
                          json_error_t *je, pb_error *err);

/* Opens path for a streaming write, appending or truncating ("a"/"w"), with
 * the guards above; the file is created 0644 (umask applies). NULL with err
 * filled (PB_EUSAGE for a refused target, PB_EINPUT for a system error). */
FILE *pb_door_fopen_write(const char *path, int append, const char *what, pb_error *err);
/* The same as a descriptor (O_RDWR when read_too, else O_WRONLY; O_CLOEXEC). */
int pb_door_open_write(const char *path, int append, int read_too, const char *what, pb_error *err);

/* Commands run by a script read only the kinds they expect (nesting counts). */
void pb_door_script_enter(void);
void pb_door_script_leave(void);
int pb_door_in_script(void);

/* A command begins: reads are remembered from now on; returns how many are.
 * pb_door_release(mark) ends it and forgets the reads made since (the command
 * dispatcher brackets every command with the pair; reads outside any command,
 * such as the workbench opening its model, are not remembered). */
int pb_door_mark(void);
void pb_door_release(int mark);

#endif
