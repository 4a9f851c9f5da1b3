/* test_lua_json.c — Lua values to JSON (util/lua_sandbox.h:
 * pb_lua_to_json): nested tables convert with their key paths; a table that
 * holds itself, a table nested 200 deep and shared tables that would take
 * 2^40 steps are refused with a message naming the source — without
 * overrunning the Lua stack (this corrupted the heap before the stack was
 * grown per level; run under `make asan`). */
#include "pb_test.h"

#include "util/lua_sandbox.h"

/* Runs text, converts its result; returns the rc and fills *out or err. */
static int convert(const char *text, json_t **out, pb_error *err)
{
	pb_lua *S = pb_lua_new(NULL);
	assert_non_null(S);
	*out = NULL;
	int rc = pb_lua_run_string(S, text, "t.lua", err);
	if (rc == PB_OK)
		rc = pb_lua_to_json(pb_lua_state(S), -1, "t.lua", out, err);
	pb_lua_free(S);
	return rc;
}

static void test_plain_tables(void **state)
{
	json_t *j;
	pb_error err = {0};
	assert_int_equal(convert("return {kind='x', cores={1,2,3}, sub={a={b=2.5}}}", &j, &err),
	                 PB_OK);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "x");
	assert_int_equal(json_array_size(json_object_get(j, "cores")), 3);
	assert_true(json_real_value(json_object_get(json_object_get(json_object_get(j, "sub"), "a"),
	                                            "b")) == 2.5);
	json_decref(j);
}

static void test_hostile_tables(void **state)
{
	json_t *j;
	pb_error err = {0};
	assert_int_equal(convert("local t = {} t.self = t return t", &j, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "t.lua: field 'self.self"));
	assert_non_null(strstr(err.msg, "nested more than 64 deep"));
	assert_int_equal(
	    convert("local t = {} local c = t for i = 1, 200 do c[1] = {} c = c[1] end return t",
	            &j, &err),
	    PB_EINPUT);
	assert_non_null(strstr(err.msg, "[1][1][1]"));
	/* 40 levels of {a = s, b = s}: 2^40 values if converted naively */
	assert_int_equal(
	    convert("local s = {1} for i = 1, 40 do s = {a = s, b = s} end return s", &j, &err),
	    PB_EINPUT);
	assert_non_null(strstr(err.msg, "t.lua: more than 100000 keys and values"));
	/* 60 levels is allowed and converts (the stack grows as it descends) */
	assert_int_equal(
	    convert("local t = {} local c = t for i = 1, 60 do c.x = {} c = c.x end return t", &j,
	            &err),
	    PB_OK);
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain_tables),
	    cmocka_unit_test(test_hostile_tables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
