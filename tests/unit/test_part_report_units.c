/* test_part_report_units.c — partition reports say what was computed (issue 35, item 4):
 * the milp plan printed is the incumbent it proved (also when no partition fits the memory,
 * where it solves without it as exact does); --emit-lp --json names the file given; the RL
 * report's CPU times carry their own unit (the first beat never after the whole run); a
 * weighted objective is shown without a time unit (text, --json, the step line); and a
 * layout or Lua cost_term whose finite costs sum to infinity is refused, naming the field
 * or the heuristic. */
#include "pb_test.h"

#include <unistd.h>

#include "partition/methods/partition.h"

/* The 48-layer chain of test_milp_proof.c: 4 output bytes per layer, no parameters. */
static pb_graph *chain_graph(void)
{
	double macs[48];
	char edges[1024] = "";
	for (int i = 0; i < 48; i++) {
		macs[i] = 1e6 * (1 + (i * 7) % 11);
		char e[24];
		if (i) {
			snprintf(e, sizeof e, "%d>%d ", i - 1, i);
			strcat(edges, e);
		}
		if (i >= 4 && i % 4 == 0) {
			snprintf(e, sizeof e, "%d>%d ", i - 4, i);
			strcat(edges, e);
		}
	}
	return pb_test_chain_graph(48, macs, edges);
}

static pb_session *chain_session(void)
{
	pb_session *s = pb_session_new();
	pb_session_set_graph(s, chain_graph(), "chain.test");
	return s;
}

/* Writes a manycore layout to a temporary file; returns its path (static buffer k). */
static const char *layout(int k, int cores, double mac_rate, double memory, double bandwidth,
                          const char *reward)
{
	static char path[4][64];
	snprintf(path[k], sizeof path[k], "/tmp/pb_units_%d_%d.lua", (int)getpid(), k);
	FILE *f = fopen(path[k], "w");
	assert_non_null(f);
	fprintf(f,
	        "return { kind = \"manycore\", name = \"units\", cores = %d, mac_rate = %.17g,\n"
	        "  memory = %.17g, bandwidth = %.17g, reward = %s }\n",
	        cores, mac_rate, memory, bandwidth, reward);
	fclose(f);
	return path[k];
}

static double jnum(const json_t *j, const char *key)
{
	const json_t *v = json_object_get(j, key);
	if (!json_is_number(v))
		fail_msg("'%s' is not a number", key);
	return json_number_value(v);
}

/* Item 1: with a core memory no partition fits, milp solves without it (as exact does).
 * Its first probe's single group has the least storage per core, and ranking plans by
 * overflow first kept that group as the printed plan while the report's incumbent was
 * the proven optimum. The printed plan must be the incumbent, and equal exact's. */
static void test_milp_plan_is_incumbent(void **state)
{
	(void)state;
	pb_session *s = chain_session();
	const char *L = layout(0, 16, 1e9, 1, 1e9, "{ mode = \"max_time\" }");
	char line[256];
	snprintf(line, sizeof line, "partition --layout %s --method milp --json", L);
	json_t *m = pb_test_run_json(s, line);
	snprintf(line, sizeof line, "partition --layout %s --method exact --json", L);
	json_t *e = pb_test_run_json(s, line);
	const json_t *mi = json_object_get(m, "milp");
	assert_string_equal(json_string_value(json_object_get(mi, "status")), "optimal");
	double plan = jnum(m, "max_time"), inc = jnum(mi, "incumbent"), ex = jnum(e, "max_time");
	assert_false(json_is_true(json_object_get(e, "fits"))); /* nothing fits: the case */
	if (fabs(plan - inc) > 1e-9 * inc || fabs(plan - ex) > 1e-9 * ex)
		fail_msg("milp plan max(t) %.9g, its incumbent %.9g, exact %.9g", plan, inc, ex);
	/* the plan has the groups the exact optimum has */
	assert_int_equal(json_array_size(json_object_get(m, "groups")),
	                 json_array_size(json_object_get(e, "groups")));
	json_decref(m);
	json_decref(e);
	remove(L);
	pb_session_free(s);
}

/* Item 2: the LP's path in --json is the one given (it was read after the solver freed
 * it: "\u0004"). */
static void test_emit_lp_json(void **state)
{
	(void)state;
	pb_session *s = chain_session();
	char lp[64], line[256];
	snprintf(lp, sizeof lp, "/tmp/pb_units_%d.lp", (int)getpid());
	snprintf(line, sizeof line,
	         "partition --layout layouts/manycore-16.lua --method milp --emit-lp %s --json",
	         lp);
	json_t *j = pb_test_run_json(s, line);
	const json_t *got = json_object_get(json_object_get(j, "milp"), "lp");
	assert_true(json_is_string(got));
	assert_string_equal(json_string_value(got), lp);
	assert_int_equal(access(lp, R_OK), 0);
	json_decref(j);
	remove(lp);
	pb_session_free(s);
}

/* A time "V U" (U one of ps ns us ms s) after `key` in text, in seconds; NAN if absent. */
static double time_after(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	if (!p)
		return NAN;
	p += strlen(key);
	char *end;
	double v = strtod(p, &end);
	if (end == p || *end != ' ')
		return NAN;
	static const char *const units[] = {"ps", "ns", "us", "ms", "s"};
	static const double scale[] = {1e-12, 1e-9, 1e-6, 1e-3, 1};
	for (int i = 0; i < 5; i++) {
		size_t n = strlen(units[i]);
		if (!strncmp(end + 1, units[i], n) && strchr(" )\n", end[1 + n]))
			return v * scale[i];
	}
	return NAN;
}

/* Item 3: the first beat happens during the run, so its CPU time is at most the run's;
 * it was printed 1000 times too large ("3.121 s" for 3.1 ms). */
static void test_rl_times(void **state)
{
	(void)state;
	pb_session *s = chain_session();
	int rc;
	char *o = pb_test_run_cmd(s,
	                          "partition --layout layouts/manycore-16.lua --method rl "
	                          "--episodes 40 --agent none --init equal --no-reference",
	                          &rc);
	assert_int_equal(rc, PB_OK);
	double beat = NAN, used = time_after(o, " episodes, ");
	const char *b = strstr(o, "first beat its start at episode ");
	if (b) { /* "... episode N (after V U CPU)" (the value after the parenthesis) */
		b = strchr(b, '(');
		beat = b ? time_after(b, strncmp(b, "(after ", 7) ? "(" : "(after ") : NAN;
		if (!(beat >= 0 && used >= 0 && beat <= used * (1 + 1e-9)))
			fail_msg("first beat %g s after a run of %g s:\n%s", beat, used, o);
	}
	if (!(used > 0))
		fail_msg("no run time with a unit:\n%s", o);
	assert_non_null(strstr(o, " CPU\n"));
	free(o);
	pb_session_free(s);
}

/* The number after `key` in text (NAN if none) and the time unit that follows it in
 * unit ("" when none: a comma, a space and a word, or the end). */
static double num_after(const char *text, const char *key, char unit[8])
{
	unit[0] = '\0';
	const char *p = strstr(text, key);
	if (!p)
		return NAN;
	char *end;
	double v = strtod(p + strlen(key), &end);
	if (end == p + strlen(key))
		return NAN;
	static const char *const units[] = {" ps", " ns", " us", " ms", " s"};
	for (int i = 0; i < 5; i++) {
		size_t n = strlen(units[i]);
		if (!strncmp(end, units[i], n) && (end[n] == '\0' || strchr(" ,;)\n", end[n])))
			snprintf(unit, 8, "%s", units[i] + 1);
	}
	return v;
}

/* Item 3: the weighted objective has no unit in the milp report, its --json (unit
 * "none", incumbent = the plan's objective) and the step line (no bound in ms). */
static void test_weighted_no_unit(void **state)
{
	(void)state;
	pb_session *s = chain_session();
	const char *L = layout(1, 4, 1e9, 1e9, 1e9,
	                       "{ mode = \"weighted\", weights = { compute = 1, storage = 2, "
	                       "routing = 1 } }");
	char line[256];
	snprintf(line, sizeof line, "partition --layout %s --method milp --json", L);
	json_t *j = pb_test_run_json(s, line);
	const json_t *mi = json_object_get(j, "milp");
	const char *unit = json_string_value(json_object_get(mi, "unit")),
	           *mode = json_string_value(json_object_get(mi, "objective_mode"));
	if (!unit || strcmp(unit, "none") || !mode || strcmp(mode, "weighted"))
		fail_msg("milp unit '%s', objective_mode '%s'", unit ? unit : "(none)",
		         mode ? mode : "(none)");
	double obj = jnum(j, "objective"), inc = jnum(mi, "incumbent");
	assert_true(fabs(obj - inc) <= 1e-9 * obj);
	json_decref(j);

	int rc;
	snprintf(line, sizeof line, "partition --layout %s --method milp", L);
	char *o = pb_test_run_cmd(s, line, &rc);
	assert_int_equal(rc, PB_OK);
	char u[8];
	double v = num_after(o, "incumbent ", u);
	if (fabs(v - obj) > 1e-5 * obj || u[0])
		fail_msg("the weighted incumbent is %g '%s' (objective %g, no unit):\n%s", v, u,
		         obj, o);
	free(o);

	snprintf(line, sizeof line, "partition --layout %s --method milp --start", L);
	free(pb_test_run_cmd(s, line, &rc));
	assert_int_equal(rc, PB_OK);
	o = pb_test_run_cmd(s, "step -n 1", &rc);
	assert_int_equal(rc, PB_OK);
	v = num_after(o, "bound ", u);
	if (!strstr(o, "(weighted, no unit)") || !isfinite(v) || u[0])
		fail_msg("step line (the bound without a unit): %s", o);
	free(o);
	assert_true(isnan(s->solver->bound)); /* the sparkline's bound is of max(t): none */
	remove(L);
	pb_session_free(s);
}

/* Item 3: finite costs that sum to infinity are refused where they arise. */
static void test_nonfinite_refused(void **state)
{
	(void)state;
	pb_session *s = chain_session();
	/* one weight alone overflows its term */
	const char *L = layout(2, 4, 1e9, 1e9, 1e9,
	                       "{ mode = \"weighted\", weights = { compute = 1e308, storage = 0, "
	                       "routing = 0 } }");
	char line[256];
	snprintf(line, sizeof line, "partition --layout %s --method greedy --json", L);
	int rc;
	char *o = pb_test_run_cmd(s, line, &rc);
	assert_int_equal(rc, PB_EINPUT);
	if (!strstr(o, L) || !strstr(o, "'reward.weights.compute'"))
		fail_msg("%s", o);
	free(o);
	remove(L);
	/* each term finite (compute and routing on one core: 0.8 ms each), their sum not:
	 * 48 layers of 4 bytes, all MACs of the chain */
	double macs = 0;
	for (int i = 0; i < 48; i++)
		macs += 1e6 * (1 + (i * 7) % 11);
	L = layout(3, 4, macs / 0.8e-3, 1e9, 48 * 4 / 0.8e-3,
	           "{ mode = \"weighted\", weights = { compute = 1.5e308, storage = 0, routing = "
	           "1.5e308 } }");
	snprintf(line, sizeof line, "partition --layout %s --method greedy --json", L);
	o = pb_test_run_cmd(s, line, &rc);
	assert_int_equal(rc, PB_EINPUT);
	if (!strstr(o, L) || !strstr(o, "'reward.weights'") || !strstr(o, "sum"))
		fail_msg("%s", o);
	free(o);
	remove(L);
	pb_session_free(s);

	/* Lua cost terms: two finite values whose sum is not */
	char buf[8192];
	pb_test_session t;
	pb_test_session_open(&t, buf, sizeof buf);
	pb_session_set_graph(t.s, chain_graph(), "chain.test");
	pb_error err = {0};
	assert_int_equal(pb_test_session_lua(&t,
	                                     "pb.heuristic{ name = 'big_a', kind = 'cost_term', "
	                                     "fn = function(p) return 1e308 end }\n"
	                                     "pb.heuristic{ name = 'big_b', kind = 'cost_term', "
	                                     "fn = function(p) return 1e308 end }\n",
	                                     "terms.lua", &err),
	                 PB_OK);
	memset(&err, 0, sizeof err);
	rc = pb_test_session_cmd(&t, "partition --layout layouts/manycore-16.lua --method greedy",
	                         &err);
	assert_int_equal(rc, PB_EINPUT);
	if (!strstr(err.msg, "'big_b' (cost_term)") || !strstr(err.msg, "infinity"))
		fail_msg("%s", err.msg);
	pb_test_session_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_milp_plan_is_incumbent),
	    cmocka_unit_test(test_emit_lp_json),
	    cmocka_unit_test(test_rl_times),
	    cmocka_unit_test(test_weighted_no_unit),
	    cmocka_unit_test(test_nonfinite_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
