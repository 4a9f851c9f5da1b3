/*
 * test_cmd_perms.c — script permissions live on each command's entry
 * (pb_command.script, and .paths for positional arguments, commands.h) and
 * on each option's (pb_opt.path, args.h; issue 40 item 5). For every
 * command of every table, whether scripts may run it or not:
 *  - every option whose value is a file (metavar FILE, DIR, LOG, PROFILE or
 *    MODEL) says what the command does with it (.path): a path option added
 *    without a decision fails here;
 *  - every word of an option's .path is well formed ("r:KIND" with a kind
 *    the file door knows, "w", "s", "g");
 *  - .paths holds only positional tokens (r@N:KIND, w@N, s@N): an option's
 *    token there belongs on the option;
 *  - the script field is one of PB_SCRIPT_*.
 * Then the rules act: a script is refused `extract` (never decided for
 * scripts) and `layout --calibrate` of a file of the wrong kind.
 */
#include "pb_test.h"

#include <unistd.h>

#include "util/file_door.h"

static int is_path_opt(const pb_opt *o)
{
	static const char *const metavars[] = {"FILE", "DIR", "LOG", "PROFILE", "MODEL"};
	if (o->type != PB_OPT_STR || !o->metavar)
		return 0;
	for (size_t i = 0; i < sizeof metavars / sizeof *metavars; i++)
		if (!strcmp(o->metavar, metavars[i]))
			return 1;
	return 0;
}

typedef struct {
	int commands, path_opts, problems;
} tally;

/* The words of an option's .path: "r:KIND", "w", "s", "g". */
static void check_path_words(const pb_command *c, const pb_opt *o, tally *t)
{
	char buf[128];
	snprintf(buf, sizeof buf, "%s", o->path);
	int words = 0;
	for (char *save = NULL, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		words++;
		int ok = (strchr("wsg", w[0]) && !w[1]) ||
		         (w[0] == 'r' && w[1] == ':' && pb_door_kind_named(w + 2) != PB_DOOR_ANY);
		if (!ok) {
			print_message("%s --%s: bad .path word '%s'\n", c->name, o->name, w);
			t->problems++;
		}
	}
	if (!words) {
		print_message("%s --%s: empty .path\n", c->name, o->name);
		t->problems++;
	}
}

/* .paths: positional tokens only, well formed. */
static void check_positional(const pb_command *c, tally *t)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", c->paths ? c->paths : "");
	for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		int ok = strchr("rws", tok[0]) && tok[1] == '@' && tok[2] >= '0' && tok[2] <= '9';
		const char *k = strchr(tok, ':');
		if (ok && tok[0] == 'r')
			ok = k && pb_door_kind_named(k + 1) != PB_DOOR_ANY;
		else if (ok)
			ok = !k;
		if (!ok) {
			print_message("%s: bad .paths token '%s'%s\n", c->name, tok,
			              tok[1] == ':' ? " (an option's: on its .path)" : "");
			t->problems++;
		}
	}
}

static void check_command(void *ud, const pb_command *c)
{
	tally *t = ud;
	t->commands++;
	assert_true(c->script <= PB_SCRIPT_CALLS);
	check_positional(c, t);
	for (const pb_opt *o = c->opts; o && o->name; o++) {
		if (o->path)
			check_path_words(c, o, t);
		if (!is_path_opt(o))
			continue;
		t->path_opts++;
		if (!o->path) {
			print_message("%s: option --%s takes a file but has no .path\n", c->name,
			              o->name);
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
	assert_true(t.path_opts > 40);
	assert_int_equal(t.problems, 0);
}

/* The same checks on made-up commands: an unclassified --log fails, on a
 * command scripts may not run too; so do a kind the door lacks and an
 * option's token left in .paths. */
static void unclassified_option_fails(void **state)
{
	(void)state;
	pb_opt opts[] = {{.name = "log", .type = PB_OPT_STR, .metavar = "LOG", .help = "a log"},
	                 {.name = "calibrate", .type = PB_OPT_STR, .metavar = "PROFILE"},
	                 {.name = "output",
	                  .short_name = 'o',
	                  .type = PB_OPT_STR,
	                  .metavar = "FILE",
	                  .path = "w"},
	                 {0}};
	pb_command c = {.name = "made-up", .opts = opts, .script = PB_SCRIPT_RUN};
	tally t = {0};
	check_command(&t, &c);
	assert_int_equal(t.problems, 2);
	c.script = PB_SCRIPT_NO;
	t = (tally){0};
	check_command(&t, &c);
	assert_int_equal(t.problems, 2);
	opts[0].path = "r:nonsense"; /* classified, but with a kind the door lacks */
	opts[1].path = "r:data";
	t = (tally){0};
	check_command(&t, &c);
	assert_int_equal(t.problems, 1);
	opts[0].path = "r:data w";
	t = (tally){0};
	check_command(&t, &c);
	assert_int_equal(t.problems, 0);
	c.paths = "w:output r@0:lua";
	t = (tally){0};
	check_command(&t, &c);
	assert_int_equal(t.problems, 1);
	/* what commands.c checks: the options' words as tokens after .paths */
	c.paths = "r@0:lua";
	char tok[256];
	assert_string_equal(pb_cmd_path_tokens(&c, tok, sizeof tok),
	                    "r@0:lua r:log:data w:log r:calibrate:data w:output");
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
