/* test_script_sizes.c — counts a script passes to C are range-checked before
 * arithmetic (issue 39). pb.partition_apply with two cores of 2^30 layers
 * each: merging them overflowed an int (UBSan aborted; a release build
 * returned a negative count); now refused with an error naming the total.
 * Counts that fit still work. pb.node(i) with i past an int: was the node
 * i mod 2^32 (node 0 for 2^32), now nil. Run under UBSan by `make asan`. */
#include "pb_test.h"

static void test_partition_apply_total(void **state)
{
	(void)state;
	char buf[4096];
	pb_test_session t;
	pb_test_session_open(&t, buf, sizeof buf);
	pb_error err = {0};
	/* action 0 merges core 0 into core 1 (partition/chain/env.h, type A) */
	int rc =
	    pb_test_session_lua(&t, "pb.partition_apply({1 << 30, 1 << 30}, 0)", "big.lua", &err);
	assert_int_not_equal(rc, PB_OK);
	if (!strstr(err.msg, "more than 2^30 layers"))
		fail_msg("said: %s", err.msg);
	rc = pb_test_session_lua(&t, "pb.partition_apply({(1 << 30) - 5, 3, 3}, 1)", "big3.lua",
	                         &err);
	assert_int_not_equal(rc, PB_OK);
	assert_non_null(strstr(err.msg, "more than 2^30 layers"));
	/* the largest total allowed merges without overflow */
	rc = pb_test_session_lua(&t,
	                         "local r = pb.partition_apply({1 << 29, 1 << 29}, 0)\n"
	                         "print(r[1], r[2])",
	                         "edge.lua", &err);
	if (rc)
		fail_msg("edge.lua: %s", err.msg);
	assert_non_null(strstr(buf, "0\t1073741824"));
	pb_test_session_close(&t);
}

static void test_node_index(void **state)
{
	(void)state;
	char buf[4096];
	pb_test_session t;
	pb_test_session_open(&t, buf, sizeof buf);
	pb_error err = {0};
	if (pb_test_session_cmd(&t, "open models/resnet18.onnx", &err))
		fail_msg("open: %s", err.msg);
	int rc = pb_test_session_lua(&t,
	                             "print(pb.node(1 << 32), pb.node((1 << 32) + 1), "
	                             "pb.node(math.mininteger), pb.node(-1), pb.node(0) ~= nil)",
	                             "node.lua", &err);
	if (rc)
		fail_msg("node.lua: %s", err.msg);
	if (!strstr(buf, "nil\tnil\tnil\tnil\ttrue"))
		fail_msg("printed: %s", buf);
	pb_test_session_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_partition_apply_total),
	                                   cmocka_unit_test(test_node_index)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
