/*
 * test_grow.c — util/grow.h: the first capacity, doubling with the contents
 * kept, and a size past SIZE_MAX refused with the array and capacity unchanged.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "util/grow.h"

static void test_grow_doubles(void **state)
{
	(void)state;
	long cap = 0;
	int *a = pb_grow(NULL, &cap, sizeof *a, 4);
	assert_non_null(a);
	assert_int_equal(cap, 4);
	for (int i = 0; i < 4; i++)
		a[i] = i + 10;
	int *b = pb_grow(a, &cap, sizeof *b, 4);
	assert_non_null(b);
	assert_int_equal(cap, 8);
	for (int i = 0; i < 4; i++)
		assert_int_equal(b[i], i + 10);
	free(b);
}

static void test_grow_overflow(void **state)
{
	(void)state;
	long cap = 2;
	char *a = malloc(2);
	assert_non_null(a);
	/* 4 entries of SIZE_MAX / 2 bytes: more than SIZE_MAX */
	assert_null(pb_grow(a, &cap, SIZE_MAX / 2, 1));
	assert_int_equal(cap, 2);
	long big = LONG_MAX / 2 + 1; /* doubling overflows a long */
	assert_null(pb_grow(a, &big, 1, 1));
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_grow_doubles),
	    cmocka_unit_test(test_grow_overflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
