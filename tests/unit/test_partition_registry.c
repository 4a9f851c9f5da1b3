/*
 * test_partition_registry.c — the partition methods are one registry
 * (core/partition/methods/method_registry.h; issue 40 item 3): a method is its own
 * file plus one registry line, and everything that names methods reads the
 * registry. For every registered method:
 *  - its name is unique, it has a summary and a unit, a start, and a TUI key
 *    no other method has;
 *  - every option it says it reads is an option of `partition`, and the
 *    parser accepts it with the method;
 *  - `partition --help` lists it with its summary and its options, and the
 *    --method line lists the registry's names in order;
 *  - --method's choices (what Tab completes in the workbench) are the
 *    registry's names, in order;
 *  - the error for an unknown method names every method;
 *  - docs/partition.md's method list has it, and lists nothing else;
 *  - it solves a tiny chain to a valid plan of its own name, no better than
 *    exact's optimum, and equal to it when the method proves (exact, milp).
 */
#include "pb_test.h"

#include "hw.h"
#include "partition/methods/method_registry.h"
#include "partition/methods/partition.h"

static const pb_command *partition_cmd(void)
{
	const pb_command *c = pb_cmd_find("partition");
	assert_non_null(c);
	return c;
}

static const pb_opt *opt_named(const pb_command *c, const char *name)
{
	for (const pb_opt *o = c->opts; o && o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

/* Calls fn(ud, option) for each option name of m->options. */
static void each_option(const pb_part_method *m, void (*fn)(void *, const char *), void *ud)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", m->options);
	for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
		fn(ud, t);
}

static void test_entries(void **state)
{
	(void)state;
	int n = pb_part_method_count();
	assert_true(n >= 7); /* exact milp rl greedy equal local pack */
	for (int i = 0; i < n; i++) {
		const pb_part_method *m = pb_part_method_at(i);
		assert_non_null(m);
		assert_non_null(m->name);
		assert_true(m->name[0] != '\0');
		assert_non_null(m->summary);
		assert_true(strlen(m->summary) > 10);
		assert_non_null(m->unit);
		assert_non_null(m->options);
		assert_non_null(m->start);
		assert_ptr_equal(pb_part_method_find(m->name), m);
		for (int k = 0; k < i; k++) {
			const pb_part_method *o = pb_part_method_at(k);
			assert_string_not_equal(o->name, m->name);
			if (m->key)
				assert_int_not_equal(o->key, m->key);
		}
	}
	assert_null(pb_part_method_at(n));
	assert_null(pb_part_method_find("nosuch"));
	for (const char *const *nm = (const char *const[]){"exact", "milp", "rl", "greedy", "equal",
	                                                   "local", "pack", NULL};
	     *nm; nm++)
		assert_non_null(pb_part_method_find(*nm));
}

typedef struct {
	const pb_part_method *m;
	const char *help;
} opt_ctx;

/* The option is the partition command's, parses with the method, and the
 * help lists it. */
static void check_option(void *ud, const char *name)
{
	const opt_ctx *x = ud;
	const pb_command *c = partition_cmd();
	const pb_opt *o = opt_named(c, name);
	if (!o)
		fail_msg("method %s reads --%s, which partition has not", x->m->name, name);
	char *argv[5] = {"--method", (char *)x->m->name, NULL, NULL, NULL};
	char flag[64];
	snprintf(flag, sizeof flag, "--%s", name);
	argv[2] = flag;
	int argc = 3;
	if (o->type != PB_OPT_FLAG)
		argv[argc++] = o->type == PB_OPT_STR ? "x.txt" : "3";
	pb_args a;
	pb_error err = {0};
	if (pb_args_parse(c->opts, argc, argv, &a, "partition", &err) != PB_OK)
		fail_msg("--method %s --%s: %s", x->m->name, name, err.msg);
	assert_true(pb_args_has(&a, name));
	assert_string_equal(pb_args_str(&a, "method", NULL), x->m->name);
	/* the help's line of the method lists the option */
	const char *line = strstr(x->help, x->m->summary);
	assert_non_null(line);
	const char *next = strstr(line, "\n  ");
	assert_non_null(next);
	const char *end = strchr(next + 1, '\n');
	char opt_line[256];
	snprintf(opt_line, sizeof opt_line, "%.*s", (int)(end - next), next);
	if (!strstr(opt_line, flag))
		fail_msg("help of %s: no %s in '%s'", x->m->name, flag, opt_line);
}

static char help_buf[65536];

/* partition --help, into help_buf. */
static char *help_text(void)
{
	memset(help_buf, 0, sizeof help_buf);
	FILE *f = fmemopen(help_buf, sizeof help_buf - 1, "w");
	assert_non_null(f);
	pb_cmd_print_help(partition_cmd(), f);
	fclose(f);
	return help_buf;
}

static void test_help_and_options(void **state)
{
	(void)state;
	char *help = help_text();
	/* the --method line: the registry's names in order, joined by '|' */
	char names[256] = "";
	for (int i = 0; i < pb_part_method_count(); i++) {
		strcat(names, i ? "|" : "");
		strcat(names, pb_part_method_at(i)->name);
	}
	const char *ml = strstr(help, "-m, --method M");
	assert_non_null(ml);
	const char *eol = strchr(ml, '\n');
	char line[512];
	snprintf(line, sizeof line, "%.*s", (int)(eol - ml), ml);
	if (!strstr(line, names))
		fail_msg("'%s' lacks '%s'", line, names);
	for (int i = 0; i < pb_part_method_count(); i++) {
		const pb_part_method *m = pb_part_method_at(i);
		char want[300];
		snprintf(want, sizeof want, "\n  %-8s %s\n", m->name, m->summary);
		if (!strstr(help, want))
			fail_msg("partition --help lacks the line of %s", m->name);
		opt_ctx x = {m, help};
		each_option(m, check_option, &x);
	}
}

static void test_choices(void **state)
{
	(void)state;
	const pb_opt *o = opt_named(partition_cmd(), "method");
	assert_non_null(o);
	assert_non_null(o->choices);
	const char *v[64];
	int n = o->choices(v, 64);
	assert_int_equal(n, pb_part_method_count());
	for (int i = 0; i < n; i++)
		assert_string_equal(v[i], pb_part_method_at(i)->name);
	assert_int_equal(o->choices(v, 2), 2); /* the cap holds */
}

static void test_unknown(void **state)
{
	(void)state;
	pb_session *s = pb_session_new();
	int rc;
	char *out = pb_test_run_cmd(s,
	                            "partition models/tiny_branches.dot --layout "
	                            "layouts/manycore-16.lua --method simplex",
	                            &rc);
	assert_int_equal(rc, PB_EUSAGE);
	assert_non_null(strstr(out, "unknown method 'simplex'"));
	for (int i = 0; i < pb_part_method_count(); i++) {
		char want[64];
		snprintf(want, sizeof want, "%s%s%s", i ? ", " : "(", pb_part_method_at(i)->name,
		         i + 1 == pb_part_method_count() ? ")" : ",");
		if (!strstr(out, want))
			fail_msg("'%s' lacks '%s'", out, want);
	}
	free(out);
	pb_session_free(s);
}

/* docs/partition.md: the bullets "* `NAME` — " under "## Methods" are the
 * registry's methods. */
static void test_docs(void **state)
{
	(void)state;
	FILE *f = fopen("docs/partition.md", "r");
	assert_non_null(f);
	char line[1024];
	int in = 0, listed = 0;
	int seen[64] = {0};
	while (fgets(line, sizeof line, f)) {
		if (!strncmp(line, "## ", 3)) {
			in = strstr(line, "## Methods") == line;
			continue;
		}
		char name[64];
		if (!in || sscanf(line, "* `%63[^`]` ", name) != 1)
			continue;
		const pb_part_method *m = pb_part_method_find(name);
		if (!m)
			fail_msg("docs/partition.md lists a method '%s' that is not registered",
			         name);
		for (int i = 0; i < pb_part_method_count(); i++)
			if (pb_part_method_at(i) == m)
				seen[i] = 1;
		listed++;
	}
	fclose(f);
	for (int i = 0; i < pb_part_method_count(); i++)
		if (!seen[i])
			fail_msg("docs/partition.md, ## Methods: no bullet for '%s'",
			         pb_part_method_at(i)->name);
	assert_int_equal(listed, pb_part_method_count());
}

static pb_plan *solve(const pb_graph *g, const pb_hw *hw, const char *method, int *ac,
                      double *optimum)
{
	pb_part_opts o = {0};
	o.method = method;
	o.episodes = 20;
	o.seed = 3;
	o.agent = "none";
	pb_solver *sv;
	pb_error err = {0};
	if (pb_partition_solver_new(g, hw, &o, &sv, &err) != PB_OK)
		fail_msg("%s: %s", method, err.msg);
	pb_solver_progress p = {0};
	while (!p.done)
		if (pb_solver_step(sv, 50, &p, &err) != PB_OK)
			fail_msg("%s: %s", method, err.msg);
	pb_plan *plan = pb_plan_copy(pb_solver_incumbent(sv));
	assert_non_null(plan);
	pb_part_problem *P = pb_partition_solver_problem(sv);
	if (pb_part_from_plan(P, plan, ac, &err) != PB_OK)
		fail_msg("%s: its plan does not read back: %s", method, err.msg);
	if (!pb_part_state_valid(P, ac, &err))
		fail_msg("%s: its plan is no valid partition: %s", method, err.msg);
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, NULL);
	assert_true(fabs(pb_plan_metric(plan, "max_time", NAN) - ev.max_time) <=
	            1e-12 * ev.max_time);
	*optimum = pb_partition_solver_optimum(sv);
	pb_solver_free(sv);
	return plan;
}

static void test_solves_a_chain(void **state)
{
	(void)state;
	const double macs[8] = {4e6, 1e6, 9e6, 2e6, 2e6, 7e6, 1e6, 5e6};
	pb_graph *g = pb_test_chain_graph(8, macs, "0>1 1>2 2>3 3>4 4>5 5>6 6>7");
	assert_non_null(g);
	pb_hw *hw = NULL;
	pb_error err = {0};
	assert_int_equal(pb_hw_load_string("return { kind = 'manycore', name = 'chip4', cores = 4,"
	                                   " mac_rate = 1.0e9, memory = 1e9, bandwidth = 1e10 }",
	                                   "registry-test.lua", &hw, &err),
	                 PB_OK);
	int ac[4];
	double ref;
	pb_plan *best = solve(g, hw, "exact", ac, &ref);
	double opt = pb_plan_metric(best, "max_time", NAN);
	assert_true(isfinite(opt) && opt > 0);
	pb_plan_free(best);
	for (int i = 0; i < pb_part_method_count(); i++) {
		const pb_part_method *m = pb_part_method_at(i);
		double optimum;
		pb_plan *plan = solve(g, hw, m->name, ac, &optimum);
		assert_string_equal(plan->method, m->name);
		double t = pb_plan_metric(plan, "max_time", NAN);
		if (!(t >= opt * (1 - 1e-9)))
			fail_msg("%s: max(t) %.9g below the optimum %.9g", m->name, t, opt);
		/* the reference labels every other method's plan */
		assert_true(fabs(optimum - opt) <= 1e-9 * opt);
		if (!strcmp(m->name, "exact") || !strcmp(m->name, "milp"))
			assert_true(fabs(t - opt) <= 1e-9 * opt);
		pb_plan_free(plan);
	}
	pb_hw_free(hw);
	pb_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_entries), cmocka_unit_test(test_help_and_options),
	    cmocka_unit_test(test_choices), cmocka_unit_test(test_unknown),
	    cmocka_unit_test(test_docs),    cmocka_unit_test(test_solves_a_chain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
