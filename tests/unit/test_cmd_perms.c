/*
 * test_cmd_perms.c — script permissions live on each command's entry
 * (pb_command.script and .paths, commands.h; issue 40 item 5). For every
 * command of every table:
 *  - every option whose value is a file (metavar FILE, DIR or LOG) of a
 *    command that scripts may run is classified in .paths (read with a
 *    kind, written, or replacing session state): a path option added
 *    without a decision fails here;
 *  - every token of .paths is well formed, names an option the command
 *    has, and a read token names a kind the file door knows;
 *  - the script field is one of PB_SCRIPT_*.
 * Then the rules act: a script is refused `extract` (never decided for
 * scripts) and `layout --calibrate` of a file of the wrong kind.
 */
#include "pb_test.h"

#include <unistd.h>

#include "util/file_door.h"

static int is_path_opt(const pb_opt *o)
{
	return o->type == PB_OPT_STR && o->metavar &&
	       (!strcmp(o->metavar, "FILE") || !strcmp(o->metavar, "DIR") ||
	        !strcmp(o->metavar, "LOG"));
}

static const pb_opt *opt_named(const pb_command *c, const char *name)
{
	for (const pb_opt *o = c->opts; o && o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

/* 1 when .paths has a token of any class for option `name`. */
static int classified(const pb_command *c, const char *name)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", c->paths ? c->paths : "");
	for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (t[1] != ':')
			continue;
		char *k = strchr(t + 2, ':');
		size_t n = k ? (size_t)(k - (t + 2)) : strlen(t + 2);
		if (n == strlen(name) && !strncmp(t + 2, name, n))
			return 1;
	}
	return 0;
}

typedef struct {
	int commands, path_opts, problems;
} tally;

static void check_tokens(const pb_command *c, tally *t)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", c->paths ? c->paths : "");
	for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		int ok = strchr("rwsg", tok[0]) && (tok[1] == ':' || tok[1] == '@');
		if (ok && tok[1] == ':') {
			char name[64];
			snprintf(name, sizeof name, "%s", tok + 2);
			char *k = strchr(name, ':');
			if (k)
				*k = '\0';
			ok = opt_named(c, name) != NULL;
			if (ok && tok[0] == 'r')
				ok = k && pb_door_kind_named(k + 1) != PB_DOOR_ANY;
		} else if (ok && tok[0] == 'r') {
			const char *k = strchr(tok + 2, ':');
			ok = k && pb_door_kind_named(k + 1) != PB_DOOR_ANY;
		}
		if (!ok) {
			print_message("%s: bad script path token '%s'\n", c->name, tok);
			t->problems++;
		}
	}
}

static void check_command(void *ud, const pb_command *c)
{
	tally *t = ud;
	t->commands++;
	assert_true(c->script <= PB_SCRIPT_CALLS);
	check_tokens(c, t);
	if (c->script == PB_SCRIPT_NO)
		return;
	for (const pb_opt *o = c->opts; o && o->name; o++) {
		if (!is_path_opt(o))
			continue;
		t->path_opts++;
		/* --layout of a PB_CMD_LAYOUT command is checked by the flag */
		if (!strcmp(o->name, "layout") && (c->flags & PB_CMD_LAYOUT))
			continue;
		if (!classified(c, o->name)) {
			print_message("%s: option --%s takes a file but is not in .paths\n",
			              c->name, o->name);
			t->problems++;
		}
	}
}

static void every_path_option_classified(void **state)
{
	(void)state;
	tally t = {0};
	pb_cmd_foreach(check_command, &t);
	assert_true(t.commands > 30);
	assert_true(t.path_opts > 20);
	assert_int_equal(t.problems, 0);
}

/* The same check on a made-up command: an unclassified --log fails it. */
static void unclassified_option_fails(void **state)
{
	(void)state;
	static const pb_opt opts[] = {{"log", 0, PB_OPT_STR, "LOG", "a log"},
	                              {"output", 'o', PB_OPT_STR, "FILE", "out"},
	                              {0}};
	pb_command c = {
	    "made-up",          NULL, NULL, opts, NULL, 0, NULL, .script = PB_SCRIPT_RUN,
	    .paths = "w:output"};
	tally t = {0};
	check_command(&t, &c);
	assert_int_equal(t.problems, 1);
	c.paths = "w:output r:log:nonsense";
	t = (tally){0};
	check_command(&t, &c);
	assert_int_equal(t.problems, 1); /* classified, but with a kind the door lacks */
	c.paths = "w:output r:log:data";
	t = (tally){0};
	check_command(&t, &c);
	assert_int_equal(t.problems, 0);
}

static char outbuf[1 << 16];

static void rules_act(void **state)
{
	(void)state;
	pb_test_session f;
	pb_test_session_open(&f, outbuf, sizeof outbuf);
	pb_error err = {0};
	assert_int_equal(pb_test_session_cmd(&f, "open models/squeezenet1_1.onnx", &err), PB_OK);
	const char *script = "/tmp/pb_test_cmd_perms.lua";
	FILE *fp = fopen(script, "w");
	assert_non_null(fp);
	fputs("local ok, e = pcall(pb.cmd, 'extract -o /tmp/pb_perm_x')\n"
	      "assert(not ok and tostring(e):find('not available to scripts'), tostring(e))\n"
	      "ok, e = pcall(pb.cmd, 'layout layouts/manycore-16.lua --calibrate layouts/x.txt')\n"
	      "assert(not ok and tostring(e):find('scripts read only'), tostring(e))\n"
	      "print('perms ok')\n",
	      fp);
	fclose(fp);
	char line[256];
	snprintf(line, sizeof line, "run %s", script);
	int rc = pb_test_session_cmd(&f, line, &err);
	if (rc)
		print_message("%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	assert_non_null(strstr(outbuf, "perms ok"));
	unlink(script);
	pb_test_session_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_path_option_classified),
	    cmocka_unit_test(unclassified_option_fails),
	    cmocka_unit_test(rules_act),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
