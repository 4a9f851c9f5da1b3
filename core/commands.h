/*
 * commands.h — the one command table (tmux style).
 *
 * Every feature is a command: CLI subcommands (`partbench partition ...`),
 * the TUI's `:` line and key bindings, and Lua's pb.cmd() all run the same
 * entries. Modules contribute their commands in core/cmds/<module>.c as
 *     const pb_command pb_cmds_<module>[] = { {...}, ..., {0} };
 * and the build generates the registry from the files it finds, so adding a
 * module never edits a shared list.
 *
 * Handlers print human output (or JSON with --json) to ctx->out, change the
 * session only through session.h, and return a status; they OR redraw flags
 * into ctx->redraw for the TUI.
 */
#ifndef PB_COMMANDS_H
#define PB_COMMANDS_H

#include <stdio.h>

#include "args.h"
#include "util/error.h"
#include "session.h"

enum {
	PB_REDRAW_STATUS = 1,
	PB_REDRAW_CANVAS = 2,
	PB_REDRAW_TABLE = 4,
	PB_RELAYOUT = 8,
	PB_REDRAW_ALL = 15,
	PB_QUIT = 16 /* the front end should close (the `quit` command) */
};

/* Progress of long work (bars on a terminal, TUI status, nothing in tests).
 * Returns non-zero when the user asked to cancel. */
typedef int (*pb_progress_fn)(void *ud, double fraction, const char *line);

typedef struct pb_cmd_ctx {
	pb_session *s;
	FILE *out;       /* command output */
	FILE *log;       /* warnings and progress text (stderr in the CLI) */
	int interactive; /* 1 inside the TUI */
	int redraw;      /* PB_REDRAW_* flags set by handlers */
	pb_progress_fn progress;
	void *progress_ud;
	/* Set on the commands a Lua script runs (pb.cmd): they are checked
	 * against the command's own .script and .paths (a command marked
	 * PB_SCRIPT_NO is refused), read only files of the kind they expect
	 * (.lua, model and JSON files), and write files only under allow_write. */
	int from_script;
	/* The folder (a real path) under which a script's commands may write;
	 * NULL: nowhere. `run --allow-write DIR` sets it for the script it runs. */
	const char *allow_write;
} pb_cmd_ctx;

typedef struct pb_command pb_command;
/* argv[0] is the command name. */
typedef int (*pb_cmd_fn)(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err);

enum {
	PB_CMD_GRAPH = 1,  /* first positional is MODEL, optional if one is open */
	PB_CMD_LAYOUT = 2, /* takes --layout L (required unless one is loaded) */
	PB_CMD_HIDDEN = 4, /* not listed in `partbench --help` */
	PB_CMD_SVG_OUT =
	    8,          /* writes an SVG: without -o, a last positional FILE.svg is the output */
	PB_CMD_RAW = 16 /* from a command line, the rest of the line after the name is one
	                   argument, unsplit and unquoted (Lua code for `lua`) */
};

struct pb_command {
	const char *name;
	const char *usage;   /* "partition [MODEL] --layout L --method M" */
	const char *summary; /* one line */
	const pb_opt *opts;  /* option table, terminated by {0} */
	pb_cmd_fn fn;
	unsigned flags;
	const char *help; /* longer text for --help, may be NULL */
	/* What a Lua script may do with the command (pb.cmd): PB_SCRIPT_*. */
	unsigned script;
	/* The files its positional arguments name, for scripts (commands.c
	 * checks them before the command runs), tokens separated by spaces:
	 *   w@N       positional N is a file the command writes
	 *   r@N:K     positional N names a file of kind K (util/file_door.h) it reads
	 *   s@N       positional N replaces session state (plan, layout)
	 * Options say it on their own entry (pb_opt.path). PB_CMD_GRAPH commands
	 * read a model in positional 0 and PB_CMD_LAYOUT ones a layout in
	 * --layout; both replace session state. */
	const char *paths;
	/* Optional: help generated after .help (e.g. partition's methods, from
	 * their registry). */
	void (*help_more)(FILE *out);
};

/* pb_command.script: the zero value refuses, so a new command is refused
 * to scripts until someone decides what it may do there. */
enum {
	PB_SCRIPT_NO = 0,   /* scripts may not run it */
	PB_SCRIPT_RUN = 1,  /* scripts may run it; callbacks may not */
	PB_SCRIPT_CALLS = 2 /* callbacks too (the session is locked): it only reads it */
};

/* The generated registry: NULL-terminated list of module tables. */
extern const pb_command *const pb_cmd_tables[];

const pb_command *pb_cmd_find(const char *name);
/* Calls fn(ud, cmd) for every command, sorted by name. */
void pb_cmd_foreach(void (*fn)(void *ud, const pb_command *c), void *ud);
/* Runs argv (argv[0] = command name): parses options, handles --help, loads
 * MODEL / --layout / --input for PB_CMD_GRAPH / PB_CMD_LAYOUT commands. */
int pb_cmd_run_argv(pb_cmd_ctx *ctx, int argc, char **argv, pb_error *err);
/* 1 when path (a file to write, existing or not) lies under the folder dir
 * (a real path), symbolic links resolved. */
int pb_cmd_path_within(const char *dir, const char *path);
/* Splits a line like a shell (quotes, backslashes) and runs it. */
int pb_cmd_run_line(pb_cmd_ctx *ctx, const char *line, pb_error *err);
/* Splits a line into argv; returns argc or -1 (unbalanced quotes).
 * Free with pb_cmd_split_free. */
int pb_cmd_split(const char *line, char ***argv_out);
void pb_cmd_split_free(int argc, char **argv);
void pb_cmd_print_help(const pb_command *c, FILE *out);
/* The files a command touches, as tokens: its .paths and, per option with a
 * .path, "w:OPT", "r:OPT:KIND", "s:OPT", "g:OPT". Returns buf (cut at len). */
char *pb_cmd_path_tokens(const pb_command *c, char *buf, size_t len);
/* Command names starting with prefix (for completion); returns count. */
int pb_cmd_complete(const char *prefix, const char **out, int max);
/* Reports progress through ctx; returns non-zero if cancelled. */
int pb_cmd_progress(pb_cmd_ctx *ctx, double fraction, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The best plan of a cluster command (shard, pipeline) does not fit the
 * device memory: warns on ctx->log naming the model, the layout and the
 * memory; returns an error (exit 2) when --require-fit was given, else PB_OK. */
int pb_cmd_report_fit(pb_cmd_ctx *ctx, const pb_args *a, const char *cmd, double memory,
                      pb_error *err);

/* Options every PB_CMD_GRAPH command accepts (append with PB_OPTS_GRAPH). */
#define PB_OPTS_GRAPH                                                                              \
	{                                                                                          \
		.name = "input", .short_name = 'i', .type = PB_OPT_LIST,                           \
		.metavar = "NAME=D1,D2,..",                                                        \
		.help = "set a symbolic input shape (repeatable), e.g. input=1,3,640,640"          \
	}
#define PB_OPTS_LAYOUT                                                                             \
	{                                                                                          \
		.name = "layout", .short_name = 'l', .type = PB_OPT_STR, .metavar = "FILE",        \
		.help = "hardware layout (layouts/*.lua)", .path = "r:lua s"                       \
	}
#define PB_OPTS_JSON                                                                               \
	{                                                                                          \
		.name = "json", .type = PB_OPT_FLAG, .help = "print machine-readable JSON"         \
	}
#define PB_OPTS_END                                                                                \
	{                                                                                          \
		0                                                                                  \
	}

#endif
