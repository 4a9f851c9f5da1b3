/* test_plan_messages.c — a plan file that cannot be loaded says why, naming
 * the field: missing or mistyped format, assignment, optional fields of the
 * wrong type, entries out of range (2^40 is refused like -7, never truncated)
 * and a length that does not match the model; groups no node uses. */
#include "pb_test.h"

#include "plan.h"

static char *load_msg(const char *text, int n_nodes)
{
	json_error_t je;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &je);
	assert_non_null(j);
	pb_plan *p = NULL;
	pb_error err = {0};
	int rc = pb_plan_from_json(j, "p.json", n_nodes, &p, &err);
	json_decref(j);
	if (rc == PB_OK) {
		pb_plan_free(p);
		return NULL;
	}
	assert_null(p);
	return strdup(err.msg);
}

static void expect(const char *text, const char *msg)
{
	char *got = load_msg(text, 2);
	if (!got)
		fail_msg("loaded: %s", text);
	if (!strstr(got, msg))
		fail_msg("%s\n  said: %s\n  want: %s", text, got, msg);
	free(got);
}

#define FMT "\"format\": \"partbench-plan\""

static void test_fields_named(void **state)
{
	expect("[1, 2]", "a plan must be a JSON object, not an array");
	expect("{\"assignment\": [0, 0]}", "field 'format' is missing");
	expect("{\"format\": \"x\", \"assignment\": [0, 0]}",
	       "\"format\" is not \"partbench-plan\"");
	expect("{" FMT "}", "field 'assignment' is missing");
	expect("{" FMT ", \"assignment\": {}}",
	       "field 'assignment' must be an array, not an object");
	expect("{" FMT ", \"assignment\": [0, 0], \"detail\": 3}",
	       "field 'detail' must be an object, not a number");
	expect("{" FMT ", \"assignment\": [0, 0], \"groups\": {}}",
	       "field 'groups' must be an array, not an object");
	expect("{" FMT ", \"assignment\": [0, 0], \"groups\": [7]}",
	       "groups[0] must be an object, not a number");
	expect("{" FMT ", \"assignment\": [0, 0], \"kind\": 1}", "field 'kind' must be a string");
	expect("{" FMT ", \"assignment\": [0, 0], \"metrics\": []}",
	       "field 'metrics' must be an object");
	expect("{" FMT ", \"assignment\": [0]}", "the plan assigns 1 nodes but the model has 2");
}

static void test_entries_in_range(void **state)
{
	expect("{" FMT ", \"assignment\": [0, -7]}", "assignment[1] = -7 names no group");
	expect("{" FMT ", \"assignment\": [0, 1099511627776]}",
	       "assignment[1] = 1099511627776 names no group");
	expect("{" FMT ", \"assignment\": [0, 4294967296]}", "assignment[1] = 4294967296");
	expect("{" FMT ", \"assignment\": [0, 1.5]}", "assignment[1] is not an integer");
	expect("{" FMT ", \"assignment\": [0, 2], \"groups\": [{}, {}]}",
	       "assignment[1] = 2 names no group");
	expect("{" FMT ", \"assignment\": [0, 0], \"groups\": [{\"n_units\": 1099511627776}]}",
	       "groups[0].n_units must be a whole number");
}

/* A group no node uses is refused (issue 39: a plan of 9 nodes listing
 * 40,000 empty groups made `export --plan` run for minutes); so is a list of
 * more groups than nodes, before the groups are built. */
static void test_unused_groups(void **state)
{
	expect("{" FMT ", \"assignment\": [0, 0], \"groups\": [{}, {}]}",
	       "groups[1] is used by no node");
	expect("{" FMT ", \"assignment\": [1, -1], \"groups\": [{}, {}]}",
	       "groups[0] is used by no node");
	expect("{" FMT ", \"assignment\": [0, 1], \"groups\": [{}, {}, {}]}",
	       "the plan lists 3 groups for 2 nodes");
	assert_null(load_msg("{" FMT ", \"assignment\": [1, 0], \"groups\": [{}, {}]}", 2));
}

/* detail, groups and metrics are optional: a minimal plan loads. */
static void test_minimal_plan_loads(void **state)
{
	assert_null(load_msg("{" FMT ", \"assignment\": [0, -1]}", 2));
	assert_null(load_msg("{" FMT ", \"assignment\": [0, 1], \"detail\": null}", 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fields_named),
	    cmocka_unit_test(test_entries_in_range),
	    cmocka_unit_test(test_minimal_plan_loads),
	    cmocka_unit_test(test_unused_groups),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
