/*
 * pb_test.h — shared helpers for the cmocka unit tests.
 * Tests run with the repository root as working directory (see CMakeLists).
 *
 * Graphs and partition problems built in code: pb_test_graphs.h (included
 * here). Commands: pb_test_run_cmd runs one command line and returns what it
 * printed; pb_test_session is a session whose commands and scripts print into
 * a caller's buffer. pb_test_expect_msg checks an error message.
 */
#ifndef PB_TEST_H
#define PB_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/graph.h"
#include "commands.h"
#include "load.h"
#include "session.h"
#include "script/script.h"
#include "pb_test_graphs.h"

/* Runs one command line in s; *rc gets its status. Returns what it printed
 * (malloc'd), followed by "ERROR message" when it failed. */
static inline char *pb_test_run_cmd(pb_session *s, const char *line, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	pb_cmd_ctx ctx = {s, out, stderr, 0, 0, NULL, NULL};
	pb_error err = {0};
	*rc = pb_cmd_run_line(&ctx, line, &err);
	if (*rc)
		fprintf(out, "ERROR %s", err.msg);
	fclose(out);
	return buf;
}

/* Runs one command line that must succeed and print JSON; returns it parsed. */
static inline json_t *pb_test_run_json(pb_session *s, const char *line)
{
	int rc;
	char *buf = pb_test_run_cmd(s, line, &rc);
	if (rc)
		fprintf(stderr, "%s: %s\n", line, buf ? buf : "");
	assert_int_equal(rc, PB_OK);
	json_t *j = json_loads(buf, 0, NULL);
	free(buf);
	assert_non_null(j);
	return j;
}

/* A fresh session whose command output and log go to buf (size bytes, kept
 * NUL-terminated): open it in a setup, close it in the teardown. */
typedef struct pb_test_session {
	pb_session *s;
	pb_cmd_ctx ctx;
	FILE *out;
	char *buf;
	size_t size;
} pb_test_session;

static inline void pb_test_session_open(pb_test_session *t, char *buf, size_t size)
{
	memset(buf, 0, size);
	t->s = pb_session_new();
	t->buf = buf;
	t->size = size;
	t->out = fmemopen(buf, size, "w");
	t->ctx = (pb_cmd_ctx){.s = t->s, .out = t->out, .log = t->out};
}

static inline void pb_test_session_close(pb_test_session *t)
{
	fclose(t->out);
	pb_session_free(t->s);
}

/* Empties the buffer before the next command or script writes to it; call
 * fflush(t->out) after it to read what it wrote. */
static inline void pb_test_session_rewind(pb_test_session *t)
{
	memset(t->buf, 0, t->size);
	rewind(t->out);
}

/* Runs one command line; the buffer then holds exactly what it printed. */
static inline int pb_test_session_cmd(pb_test_session *t, const char *line, pb_error *err)
{
	pb_test_session_rewind(t);
	int rc = pb_cmd_run_line(&t->ctx, line, err);
	fflush(t->out);
	return rc;
}

/* Runs Lua text as a script named `name` in the session's Lua state; the
 * buffer then holds exactly what it printed. */
static inline int pb_test_session_lua(pb_test_session *t, const char *code, const char *name,
                                      pb_error *err)
{
	pb_test_session_rewind(t);
	pb_script *sc = pb_script_get(t->s, err);
	assert_non_null(sc);
	memset(err, 0, sizeof *err);
	int rc = pb_script_run_string(sc, &t->ctx, code, name, err);
	fflush(t->out);
	return rc;
}

/* Fails unless err is a PB_EINPUT error whose message names `file` and
 * contains must1 and must2 (each may be NULL). */
static inline void pb_test_expect_msg(const pb_error *err, const char *file, const char *must1,
                                      const char *must2)
{
	assert_int_equal(err->code, PB_EINPUT);
	if (!strstr(err->msg, file) || (must1 && !strstr(err->msg, must1)) ||
	    (must2 && !strstr(err->msg, must2)))
		fail_msg("message '%s' lacks '%s'/'%s'", err->msg, must1 ? must1 : "",
		         must2 ? must2 : "");
}

#endif
