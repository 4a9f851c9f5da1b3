/* test_regex_size.c — the expanded size of a `find` pattern
 * (util/regex_size.h). Expected sizes are counted by hand: each character,
 * bracket expression or escape is one atom, {m}/{m,n} copy the operand
 * max(m, n) times, {m,} m + 1 times, groups multiply as a whole. The bound
 * stops at limit + 1 without overflow for nested bounds whose product is far
 * beyond 2^63. Fails on the code before issue 39 (no such check: `find
 * '((a{255}){255}){255}'` went to regcomp, 10 s and 3.25 GB). */
#include "pb_test.h"

#include "util/regex_size.h"

#include <regex.h>

static void test_sizes_by_hand(void **state)
{
	(void)state;
	const struct {
		const char *pat;
		long size;
	} cases[] = {
	    {"Conv", 4},            /* four characters */
	    {"Conv|Relu", 8},       /* alternatives add up */
	    {"a{3}", 3},            /* a copied three times */
	    {"ab{3}", 4},           /* the bound takes the last atom only */
	    {"(ab){3}", 6},         /* a group is one operand */
	    {"(ab|c){3}", 9},       /* (a b c) three times */
	    {"a{2,5}", 5},          /* the larger count */
	    {"a{3,}", 4},           /* m + 1 */
	    {"[]a]{3}", 3},         /* a bracket with ']' first is one atom */
	    {"[[:alpha:]_]{2}", 2}, /* a class inside a bracket */
	    {"\\.{4}", 4},          /* an escape is one atom */
	    {"x*y+z?", 3},          /* *, + and ? copy nothing */
	    {"((a{10}){10}){10}", 1000},
	    {"(a{100}){100}", 10000},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		long got = pb_regex_size(cases[i].pat, 10000);
		if (got != cases[i].size)
			fail_msg("%s: size %ld, expected %ld", cases[i].pat, got, cases[i].size);
	}
}

static void test_limit_without_overflow(void **state)
{
	(void)state;
	/* 255^3 = 16,581,375 atoms; 32767^8 overflows int64 */
	assert_int_equal(pb_regex_size("((a{255}){255}){255}", 10000), 10001);
	assert_int_equal(
	    pb_regex_size("((((((((a{32767}){32767}){32767}){32767}){32767}){32767}){32767}"
	                  "){32767})",
	                  10000),
	    10001);
	assert_int_equal(pb_regex_size("a{99999999999999999999999}", 10000), 10001);
	assert_int_equal(pb_regex_size("(a{100}){101}", 10000), 10001);
	/* 300 nested groups: deeper than the stack, refused rather than overrun */
	char deep[700];
	memset(deep, '(', 300);
	deep[300] = 'a';
	memset(deep + 301, ')', 300);
	deep[601] = 0;
	assert_int_equal(pb_regex_size(deep, 10000), 10001);
}

/* Patterns within the bound compile (regcomp is the reference for what is a
 * valid pattern; the size never refuses a small valid one). */
static void test_small_patterns_compile(void **state)
{
	(void)state;
	const char *ok[] = {"Conv", "^/layer[0-9]+/.*Relu$", "(a{100}){100}", "a{10000}"};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		assert_true(pb_regex_size(ok[i], 10000) <= 10000);
		regex_t re;
		assert_int_equal(regcomp(&re, ok[i], REG_EXTENDED | REG_NOSUB), 0);
		regfree(&re);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sizes_by_hand),
	    cmocka_unit_test(test_limit_without_overflow),
	    cmocka_unit_test(test_small_patterns_compile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
