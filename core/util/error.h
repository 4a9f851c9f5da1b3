/*
 * error.h — the one error type of partbench.
 *
 * Every fallible function in core/ returns an int status (0 = success, one of
 * the PB_E* codes otherwise) and fills a caller-owned pb_error with a message
 * that names the file and the problem. core/ never prints and never exits;
 * front ends decide how to show the message.
 */
#ifndef PB_ERROR_H
#define PB_ERROR_H

#include <stdarg.h>

enum {
	PB_OK = 0,
	PB_EUSAGE = 1, /* bad command line or arguments (CLI exit code 1) */
	PB_EINPUT = 2, /* bad input file or data (CLI exit code 2) */
	PB_ENOMEM = 3,
	PB_EINTERNAL = 4,
	PB_ECANCEL = 5 /* user cancelled a long operation */
};

typedef struct pb_error {
	int code;
	char msg[1024];
} pb_error;

/* Sets err (if non-NULL) and returns code, so callers can write
 * `return pb_err(err, PB_EINPUT, "%s: ...", path)`. */
int pb_err(pb_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int pb_verr(pb_error *err, int code, const char *fmt, va_list ap);
/* Prefixes an existing message: "prefix: old message". */
int pb_err_prefix(pb_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pb_err_clear(pb_error *err);

/* CLI exit code for a status: 0, 1 (usage) or 2 (bad input / other). */
int pb_exit_code(int status);

#endif
