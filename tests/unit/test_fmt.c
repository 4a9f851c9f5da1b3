/* test_fmt.c — the one number formatter (util/fmt.h): counts, bytes and
 * times at their boundaries (0, negative, 999.5 rounding into the next
 * unit, 1023/1024 bytes, NaN and infinities), fixed decimals and the tight
 * style, printf's rounding (ties to even) and truncation to the buffer. */
#include "pb_test.h"

#include <math.h>

#include "util/fmt.h"

typedef char *(*fmt_fn)(double, char *, size_t);

static void check(fmt_fn f, double v, const char *want)
{
	char b[64];
	const char *got = f(v, b, sizeof b);
	assert_ptr_equal(got, b);
	if (strcmp(got, want))
		fprintf(stderr, "%.17g: got '%s', want '%s'\n", v, got, want);
	assert_string_equal(got, want);
}

typedef struct {
	double v;
	const char *want;
} fmt_case;

static void check_all(fmt_fn f, const fmt_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		check(f, c[i].v, c[i].want);
}

static void check_num(double v, pb_fmt_unit u, int dec, int flags, const char *want)
{
	char b[64];
	pb_fmt_num(v, u, dec, flags, b, sizeof b);
	if (strcmp(b, want))
		fprintf(stderr, "%.17g (unit %d, %d decimals): got '%s', want '%s'\n", v, u, dec, b,
		        want);
	assert_string_equal(b, want);
}

static void test_counts(void **state)
{
	static const fmt_case c[] = {
	    {0, "0"},
	    {-0.0, "0"},
	    {512, "512"},
	    {999, "999"},
	    {999.4, "999"},
	    {999.5, "1.00 K"}, /* never "1000" */
	    {1000, "1.00 K"},
	    {12345, "12.3 K"},
	    {123456, "123 K"},
	    {999499, "999 K"},
	    {999500, "1.00 M"}, /* never "1000 K" */
	    {1234567, "1.23 M"},
	    {2.3e12, "2.30 T"},
	    {1e18, "1000 P"}, /* past the largest prefix */
	    {0.5, "0.50"},
	    {12.5, "12.5"},
	    {9.996, "10.0"},
	    {99.96, "100"},
	    {-1234, "-1.23 K"},
	    {-0.001, "0.00"}, /* no "-0.00" */
	    {-7, "-7"},
	};
	check_all(pb_fmt_si, c, sizeof c / sizeof *c);
}

static void test_bytes(void **state)
{
	/* decimal units, as the SI prefixes of the counts */
	static const fmt_case c[] = {
	    {0, "0 B"},          {640, "640 B"},        {999, "999 B"},     {999.5, "1.00 KB"},
	    {1000, "1.00 KB"},   {1023, "1.02 KB"},     {1024, "1.02 KB"},  {65536, "65.5 KB"},
	    {1e6, "1.00 MB"},    {134217728, "134 MB"}, {1.5e9, "1.50 GB"}, {2.5, "2.50 B"},
	    {-2048, "-2.05 KB"},
	};
	check_all(pb_fmt_bytes, c, sizeof c / sizeof *c);
}

static void test_times(void **state)
{
	static const fmt_case c[] = {
	    {0, "0 s"},
	    {6, "6 s"},
	    {2.1, "2.10 s"},
	    {3600, "3600 s"},
	    {1500.5, "1500 s"}, /* tie to even, as printf */
	    {1e-3, "1.00 ms"},
	    {3e-4, "300 us"},
	    {4.56e-5, "45.6 us"},
	    {0.00099949, "999 us"},
	    {0.00099951, "1.00 ms"}, /* 999.51 us rounds up a unit */
	    {0.99951, "1.00 s"},
	    {1.5e-9, "1.50 ns"},
	    {2e-13, "0.20 ps"}, /* below the smallest unit */
	    {-0.0015, "-1.50 ms"},
	    {-2, "-2 s"},
	};
	check_all(pb_fmt_time, c, sizeof c / sizeof *c);
}

static void test_not_finite(void **state)
{
	fmt_fn f[3] = {pb_fmt_si, pb_fmt_bytes, pb_fmt_time};
	for (int i = 0; i < 3; i++) {
		check(f[i], NAN, "-");
		check(f[i], INFINITY, "inf");
		check(f[i], -INFINITY, "-inf");
	}
	check(pb_fmt_time_fixed, NAN, "-");
}

static void test_fixed_and_tight(void **state)
{
	/* the report style: three decimals in the unit */
	check(pb_fmt_time_fixed, 1.044e-3, "1.044 ms");
	check(pb_fmt_time_fixed, 17.694e-3, "17.694 ms");
	check(pb_fmt_time_fixed, 8.38e-6, "8.380 us");
	check(pb_fmt_time_fixed, 1.25, "1.250 s");
	/* rounding to zero in the smallest unit reads as an exact zero, not "0.000 ps" */
	check(pb_fmt_time_fixed, 1e-16, "0 s");
	check(pb_fmt_time_fixed, -1e-16, "0 s");
	check(pb_fmt_time, 4e-16, "0 s");
	check(pb_fmt_time_fixed, 0.9999996, "1.000 s");
	check(pb_fmt_time_fixed, 0.0009999996, "1.000 ms");
	check(pb_fmt_time_fixed, 0, "0 s");
	/* `info`'s table: two decimals, no space, whole counts as they are */
	check_num(1.81414e9, PB_FMT_COUNT, 2, PB_FMT_TIGHT, "1.81G");
	check_num(512000, PB_FMT_COUNT, 2, PB_FMT_TIGHT, "512.00K");
	check_num(999999, PB_FMT_COUNT, 2, PB_FMT_TIGHT, "1.00M");
	check_num(512, PB_FMT_COUNT, 2, PB_FMT_TIGHT, "512");
	check_num(2.299e7, PB_FMT_BYTES, 2, PB_FMT_TIGHT, "22.99MB");
	check_num(1.5e6, PB_FMT_BYTES, PB_FMT_SIG3, PB_FMT_TIGHT, "1.50MB");
	check_num(123456, PB_FMT_COUNT, 0, 0, "123 K");
	check_num(1.23456e-3, PB_FMT_SECONDS, 9, 0, "1.235 ms");    /* at most 3 decimals */
	check_num(1500, (pb_fmt_unit)42, PB_FMT_SIG3, 0, "1.50 K"); /* unknown unit: count */
	check_num(-12.3456, PB_FMT_COUNT, 3, 0, "-12.346");
}

/* The digits are made without printf: they must be printf's, ties to even
 * included (0.125 -> "0.12", 0.375 -> "0.38"). */
static void test_rounding_as_printf(void **state)
{
	check(pb_fmt_si, 0.125, "0.12");
	check(pb_fmt_si, 0.375, "0.38");
	check(pb_fmt_si, 2.5e-1, "0.25");
	srand(7);
	char got[64], want[64];
	for (int i = 0; i < 200000; i++) {
		double x = (double)rand() / RAND_MAX * 999;
		if (i % 4 == 0) /* exact binary fractions: ties */
			x = floor(x * 8) / 8;
		if (x == floor(x))
			continue; /* whole numbers print without decimals */
		int d = i % 4;
		pb_fmt_num(x, PB_FMT_COUNT, d, 0, got, sizeof got);
		snprintf(want, sizeof want, "%.*f", d, x);
		if (strcmp(got, want))
			fprintf(stderr, "%.17g with %d decimals: got '%s', printf '%s'\n", x, d,
			        got, want);
		assert_string_equal(got, want);
	}
}

static void test_truncation(void **state)
{
	char b[8];
	memset(b, 'x', sizeof b);
	assert_string_equal(pb_fmt_si(1234567, b, 4), "1.2");
	assert_int_equal(b[4], 'x');
	assert_string_equal(pb_fmt_time(NAN, b, 1), "");
	b[0] = 'q';
	pb_fmt_bytes(1, b, 0); /* nothing written */
	assert_int_equal(b[0], 'q');
	char big[64];
	assert_string_equal(pb_fmt_si(1e30, big, sizeof big), "1000000000000000 P");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_counts),          cmocka_unit_test(test_bytes),
	    cmocka_unit_test(test_times),           cmocka_unit_test(test_not_finite),
	    cmocka_unit_test(test_fixed_and_tight), cmocka_unit_test(test_rounding_as_printf),
	    cmocka_unit_test(test_truncation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
