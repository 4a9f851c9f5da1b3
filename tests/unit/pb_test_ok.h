/* pb_test_ok.h — command lines that must succeed in a pb_test_session
 * (pb_test.h): the failing line and its message otherwise. Shared by the
 * edit, plan and export tests that drive a session line by line. */
#ifndef PB_TEST_OK_H
#define PB_TEST_OK_H

#include "pb_test.h"

static inline void pb_test_ok(pb_test_session *t, const char *line)
{
	pb_error err = {0};
	if (pb_test_session_cmd(t, line, &err) != PB_OK)
		fail_msg("'%s': %s", line, err.msg);
}

/* A fresh session (output to buf) that opened `model` and ran `line` (NULL:
 * nothing more). */
static inline void pb_test_session_with(pb_test_session *t, char *buf, size_t size,
                                        const char *model, const char *line)
{
	char open[512];
	pb_test_session_open(t, buf, size);
	snprintf(open, sizeof open, "open %s", model);
	pb_test_ok(t, open);
	if (line)
		pb_test_ok(t, line);
}

/* The session's only Lua rule: `name`, with effect (e.g. "cut = 'forbid'",
 * "stage = 0"), matching node id. */
static inline void pb_test_rule(pb_test_session *t, const char *name, const char *effect, int id)
{
	char code[320];
	pb_error err = {0};
	snprintf(code, sizeof code,
	         "pb.clear() pb.rule{ name = '%s', %s, match = function(op) return op.id == %d "
	         "end }",
	         name, effect, id);
	if (pb_test_session_lua(t, code, "rule.lua", &err) != PB_OK)
		fail_msg("%s: %s", code, err.msg);
}

#endif
