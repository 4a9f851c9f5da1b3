/*
 * fmt.c — numbers with units (see fmt.h).
 *
 * The unit is chosen on the rounded digits, not on the raw value: the value
 * is scaled to a candidate unit, rounded to the digits it will be printed
 * with, and moved one unit up while that rounding reaches 1000. The digits
 * come from an exact integer rounding (round_dec), so the unit test and the
 * printed text can never disagree.
 */
#include "util/fmt.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
	const char *const *names; /* lowest first */
	int n, base;              /* names[base] is the unit of the value 1 */
} family;

static const char *const count_units[] = {"", "K", "M", "G", "T", "P"};
static const char *const byte_units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
static const char *const time_units[] = {"ps", "ns", "us", "ms", "s"};
static const family families[] = {
    [PB_FMT_COUNT] = {count_units, 6, 0},
    [PB_FMT_BYTES] = {byte_units, 6, 0},
    [PB_FMT_SECONDS] = {time_units, 5, 4},
};

/* Powers of 1000 (exact doubles) and of 10 (the decimals). */
static const double p1000[] = {1, 1e3, 1e6, 1e9, 1e12, 1e15};
static const uint64_t p10[] = {1, 10, 100, 1000};

/* a (>= 0) in the unit e steps of 1000 above the base (e < 0: below). One
 * multiplication or division by an exact power: correctly rounded. */
static double scaled(double a, int e)
{
	return e >= 0 ? a / p1000[e] : a * p1000[-e];
}

/* *q = a (>= 0) rounded to d (0..3) decimals, in units of 10^-d, exactly as
 * printf's "%.*f" rounds (ties to even, the default rounding mode). Returns
 * -1 for a >= 1e15 (the caller prints with printf). */
static int round_dec(double a, int d, uint64_t *q)
{
	if (!(a < 1e15))
		return -1;
#if LDBL_MANT_DIG >= 64
	/* 53 significant bits times 10^d (at most 10 bits) fit the 64 of an x87
	 * long double: the product and its fraction are exact. */
	long double r = (long double)a * (long double)p10[d];
	long double fl = floorl(r), frac = r - fl;
	uint64_t n = (uint64_t)fl;
	if (frac > 0.5L || (frac == 0.5L && (n & 1)))
		n++;
	*q = n;
#else
	char t[40];
	snprintf(t, sizeof t, "%.*f", d, a);
	uint64_t n = 0;
	for (const char *p = t; *p; p++)
		if (*p >= '0' && *p <= '9')
			n = n * 10 + (uint64_t)(*p - '0');
	*q = n;
#endif
	return 0;
}

/* Copies s into buf as snprintf(buf, len, "%s", s) would. */
static char *put(char *buf, size_t len, const char *s, size_t n)
{
	if (len) {
		size_t k = n < len ? n : len - 1;
		memcpy(buf, s, k);
		buf[k] = '\0';
	}
	return buf;
}

char *pb_fmt_num(double v, pb_fmt_unit unit, int decimals, int flags, char *buf, size_t len)
{
	if (isnan(v))
		return put(buf, len, "-", 1);
	if (isinf(v))
		return v > 0 ? put(buf, len, "inf", 3) : put(buf, len, "-inf", 4);
	const family *f = &families[(unsigned)unit <= PB_FMT_SECONDS ? unit : PB_FMT_COUNT];
	if (decimals > 3)
		decimals = 3;
	double a = fabs(v);
	int k = f->base;
	while (k > 0 && a > 0 && scaled(a, k - f->base) < 1)
		k--;
	const char *sep = flags & PB_FMT_TIGHT ? "" : " ";
	uint64_t q;
	int d;
	for (;;) {
		double s = scaled(a, k - f->base);
		if (k == f->base && s == floor(s))
			d = 0;
		else if (decimals >= 0)
			d = decimals;
		else if (round_dec(s, 2, &q) == 0 && q < 1000)
			d = 2;
		else if (round_dec(s, 1, &q) == 0 && q < 1000)
			d = 1;
		else
			d = 0;
		int far = round_dec(s, d, &q) != 0;
		if ((far || q >= 1000 * p10[d]) && k + 1 < f->n) {
			k++;
			continue;
		}
		if (far) { /* 1e15 or more of the largest unit: printf */
			snprintf(buf, len, "%s%.*f%s%s", v < 0 ? "-" : "", d, s,
			         *f->names[k] ? sep : "", f->names[k]);
			return buf;
		}
		break;
	}
	if (q == 0 && k < f->base) { /* zero even in a unit below the base (0.000 ps): as 0 s */
		k = f->base;
		d = 0;
	}
	char digits[24], out[64];
	int nd = 0, n = 0;
	uint64_t ip = q / p10[d], fp = q % p10[d];
	do {
		digits[nd++] = (char)('0' + ip % 10);
		ip /= 10;
	} while (ip);
	if (v < 0 && q) /* no "-0.00" */
		out[n++] = '-';
	while (nd)
		out[n++] = digits[--nd];
	if (d) {
		out[n++] = '.';
		for (int i = d; i > 0; i--) {
			out[n + i - 1] = (char)('0' + fp % 10);
			fp /= 10;
		}
		n += d;
	}
	const char *u = f->names[k];
	if (*u) {
		size_t ls = strlen(sep), lu = strlen(u);
		memcpy(out + n, sep, ls);
		memcpy(out + n + ls, u, lu);
		n += (int)(ls + lu);
	}
	return put(buf, len, out, (size_t)n);
}

char *pb_fmt_si(double v, char *buf, size_t len)
{
	return pb_fmt_num(v, PB_FMT_COUNT, PB_FMT_SIG3, 0, buf, len);
}

char *pb_fmt_bytes(double v, char *buf, size_t len)
{
	return pb_fmt_num(v, PB_FMT_BYTES, PB_FMT_SIG3, 0, buf, len);
}

char *pb_fmt_time(double s, char *buf, size_t len)
{
	return pb_fmt_num(s, PB_FMT_SECONDS, PB_FMT_SIG3, 0, buf, len);
}

char *pb_fmt_time_fixed(double s, char *buf, size_t len)
{
	return pb_fmt_num(s, PB_FMT_SECONDS, 3, 0, buf, len);
}
