/*
 * util/regex_size.c — the expanded size of an extended regular expression
 * (see regex_size.h).
 *
 * One pass with a stack of open groups. Each level keeps the size of the
 * sequence so far and the size of its last atom (the operand of a
 * repetition that follows); a closing parenthesis turns its group into the
 * enclosing level's last atom. Counting stops as soon as a size passes
 * the limit, and products saturate, so no count overflows whatever the
 * bounds say. The pattern is not validated here:
 * regcomp does that afterwards (a malformed bound counts as literal text).
 */
#include "util/regex_size.h"

#include <ctype.h>

enum { REGEX_DEPTH = 256 };

typedef struct level {
	long total, last;
} level;

static long sat(long v, long limit)
{
	return v > limit ? limit + 1 : v;
}

static long regex_size_mul(long a, long b, long limit)
{
	if (a == 0 || b == 0)
		return 0;
	return a > (limit + 1) / b ? limit + 1 : sat(a * b, limit);
}

/* Reads a bound "{m}", "{m,}" or "{m,n}" at p (just after '{'); returns
 * the copies it makes and sets *end after '}', or -1 when it is no bound. */
static long regex_size_bound(const char *p, const char **end, long limit)
{
	long m = 0, n = -1;
	if (!isdigit((unsigned char)*p))
		return -1;
	while (isdigit((unsigned char)*p)) {
		m = sat(m * 10 + (*p - '0'), limit);
		p++;
	}
	if (*p == ',') {
		p++;
		if (isdigit((unsigned char)*p)) {
			n = 0;
			while (isdigit((unsigned char)*p)) {
				n = sat(n * 10 + (*p - '0'), limit);
				p++;
			}
		} else {
			n = sat(m + 1, limit);
		}
	}
	if (*p != '}')
		return -1;
	*end = p + 1;
	long copies = n > m ? n : m;
	return copies < 1 ? 1 : copies;
}

/* Skips a bracket expression starting at p ('['); returns the position
 * after its ']' (or the end of the string). */
static const char *regex_size_bracket(const char *p)
{
	p++;
	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	while (*p && *p != ']') {
		if (p[0] == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			char close = p[1];
			p += 2;
			while (*p && !(p[0] == close && p[1] == ']'))
				p++;
			if (*p)
				p += 2;
			continue;
		}
		p++;
	}
	return *p ? p + 1 : p;
}

long pb_regex_size(const char *pat, long limit)
{
	level st[REGEX_DEPTH];
	int d = 0;
	st[0].total = st[0].last = 0;
	for (const char *p = pat; *p;) {
		level *lv = &st[d];
		long atom = 1;
		if (*p == '(') {
			if (d + 1 >= REGEX_DEPTH)
				return limit + 1;
			d++;
			st[d].total = st[d].last = 0;
			p++;
			continue;
		}
		if (*p == ')' && d > 0) {
			atom = st[d].total;
			d--;
			lv = &st[d];
			p++;
		} else if (*p == '{') {
			const char *end;
			long copies = regex_size_bound(p + 1, &end, limit);
			if (copies >= 0) {
				/* the last atom, now copied: total - last + last * copies */
				long grown = regex_size_mul(lv->last, copies, limit);
				lv->total = sat(lv->total - lv->last + grown, limit);
				lv->last = grown;
				if (lv->total > limit)
					return limit + 1;
				p = end;
				continue;
			}
			p++;
		} else if (*p == '|') {
			lv->last = 0;
			p++;
			continue;
		} else if (*p == '*' || *p == '+' || *p == '?') {
			p++;
			continue;
		} else if (*p == '[') {
			p = regex_size_bracket(p);
		} else if (*p == '\\' && p[1]) {
			p += 2;
		} else {
			p++;
		}
		lv->total = sat(lv->total + atom, limit);
		lv->last = atom;
		if (lv->total > limit)
			return limit + 1;
	}
	long total = 0;
	for (int i = d; i >= 0; i--)
		total = sat(total + st[i].total, limit);
	return total;
}
