/*
 * args.h — option parsing for commands (CLI, `:` line, Lua pb.cmd).
 *
 * A command declares its options as a constant table; the same table drives
 * parsing and the generated --help text, so help never drifts from code.
 * Accepted forms: --name value, --name=value, -x value, flags without value,
 * `--` ends options. Options of type PB_OPT_LIST may repeat.
 */
#ifndef PB_ARGS_H
#define PB_ARGS_H

#include <stdio.h>

#include "util/error.h"

typedef enum { PB_OPT_FLAG, PB_OPT_INT, PB_OPT_DOUBLE, PB_OPT_STR, PB_OPT_LIST } pb_opt_type;

typedef struct pb_opt {
	const char *name; /* long name without dashes */
	char short_name;  /* 0 if none */
	pb_opt_type type;
	const char *metavar; /* "N", "FILE" ... */
	const char *help;    /* one line; mention the default */
	/* Optional: the values the option takes, for help ("a|b|c " before the
	 * help line) and completion; fills up to max and returns how many. */
	int (*choices)(const char **out, int max);
	/* What the command does with the file the value names, for scripts
	 * (pb.cmd; commands.c checks it before the command runs): words
	 * separated by spaces, "r:KIND" it reads a file of kind KIND
	 * (util/file_door.h), "w" it writes the file, "s" the file replaces
	 * session state (plan, layout), "g" the command guards the path itself
	 * (run's --allow-write may only narrow the caller's). NULL: the value is
	 * no file. Every option whose metavar is FILE, DIR, LOG, PROFILE or
	 * MODEL has one (test_cmd_perms). */
	const char *path;
} pb_opt;

#define PB_ARGS_MAX_OPTS 48
#define PB_ARGS_MAX_POS 16
#define PB_ARGS_MAX_LIST 16

typedef struct pb_args {
	const pb_opt *spec;
	int n_spec;
	int set[PB_ARGS_MAX_OPTS];         /* times seen */
	const char *val[PB_ARGS_MAX_OPTS]; /* last value */
	const char *list[PB_ARGS_MAX_OPTS][PB_ARGS_MAX_LIST];
	int n_pos;
	const char *pos[PB_ARGS_MAX_POS];
	int help; /* --help / -h seen */
} pb_args;

/* Parses argv[0..argc) (argv[0] is the first argument, not the command).
 * Strings point into argv. spec is terminated by an entry with name NULL. */
int pb_args_parse(const pb_opt *spec, int argc, char **argv, pb_args *a, const char *cmd,
                  pb_error *err);
int pb_args_has(const pb_args *a, const char *name);
const char *pb_args_str(const pb_args *a, const char *name, const char *dflt);
/* Parsed numbers; on a malformed value returns PB_EUSAGE with a message. */
int pb_args_int(const pb_args *a, const char *name, long dflt, long min, long max, long *out,
                pb_error *err);
int pb_args_double(const pb_args *a, const char *name, double dflt, double min, double max,
                   double *out, pb_error *err);
int pb_args_list(const pb_args *a, const char *name, const char ***out);
const char *pb_args_pos(const pb_args *a, int i);

/* Prints "Options:" lines for a spec. */
void pb_args_print_options(const pb_opt *spec, FILE *out);

#endif
