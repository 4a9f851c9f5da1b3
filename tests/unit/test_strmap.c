/* test_strmap.c — the name map (strmap.h): lookups after growth, overwrites,
 * keys longer than a key block, empty and similar keys, and that keys are
 * copied (the caller's buffer may change afterwards). */
#include "pb_test.h"

#include "util/strmap.h"

static void test_many_keys_and_growth(void **state)
{
	pb_strmap *m = pb_strmap_new(4); /* forces several rehashes */
	assert_non_null(m);
	char k[64];
	for (int i = 0; i < 5000; i++) {
		snprintf(k, sizeof k, "/layers/block.%d/attn/MatMul_output_0", i);
		assert_int_equal(pb_strmap_put(m, k, i), 0);
	}
	assert_int_equal(pb_strmap_count(m), 5000);
	for (int i = 0; i < 5000; i++) {
		snprintf(k, sizeof k, "/layers/block.%d/attn/MatMul_output_0", i);
		assert_int_equal(pb_strmap_get(m, k, -1), i);
	}
	/* Prefixes and near misses are different keys. */
	assert_int_equal(pb_strmap_get(m, "/layers/block.1/attn/MatMul_output_", -1), -1);
	assert_int_equal(pb_strmap_get(m, "/layers/block.1/attn/MatMul_output_00", -1), -1);
	assert_int_equal(pb_strmap_get(m, NULL, -7), -7);
	pb_strmap_free(m);
}

static void test_overwrite_long_and_empty_keys(void **state)
{
	pb_strmap *m = pb_strmap_new(0);
	char *big = malloc(100000);
	memset(big, 'x', 99999);
	big[99999] = '\0';
	assert_int_equal(pb_strmap_put(m, big, 1), 0);
	assert_int_equal(pb_strmap_put(m, "", 2), 0);
	assert_int_equal(pb_strmap_put(m, "a", 3), 0);
	assert_int_equal(pb_strmap_put(m, "a", 4), 0); /* overwrite */
	assert_int_equal(pb_strmap_count(m), 3);
	big[0] = 'y'; /* the map holds its own copy */
	assert_int_equal(pb_strmap_get(m, big, -1), -1);
	big[0] = 'x';
	assert_int_equal(pb_strmap_get(m, big, -1), 1);
	assert_int_equal(pb_strmap_get(m, "", -1), 2);
	assert_int_equal(pb_strmap_get(m, "a", -1), 4);
	/* A key after the oversized one still lands in a shared block. */
	assert_int_equal(pb_strmap_put(m, "after", 5), 0);
	assert_int_equal(pb_strmap_get(m, "after", -1), 5);
	free(big);
	pb_strmap_free(m);
	pb_strmap_free(NULL);
	assert_int_equal(pb_strmap_get(NULL, "a", -3), -3);
}

/* pb_strmap_add inserts only when absent and reports the stored value. */
static void test_add_keeps_existing(void **state)
{
	pb_strmap *m = pb_strmap_new(2);
	char k[32];
	for (int i = 0; i < 1000; i++) {
		snprintf(k, sizeof k, "t%d", i % 300);
		const char *stored = NULL;
		int v = pb_strmap_add(m, k, i, &stored);
		assert_int_equal(v, i % 300); /* the first insertion wins */
		assert_string_equal(stored, k);
		assert_ptr_not_equal(stored, k); /* the map's own copy */
	}
	assert_int_equal(pb_strmap_count(m), 300);
	assert_int_equal(pb_strmap_get(m, "t299", -1), 299);
	pb_strmap_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_many_keys_and_growth),
	    cmocka_unit_test(test_overwrite_long_and_empty_keys),
	    cmocka_unit_test(test_add_keeps_existing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
