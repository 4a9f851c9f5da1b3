/*
 * util/proof_label.c — proven optimal, or best found with bound and gap
 * (proof_label.h). The label is optimal only when the method proved it for
 * the problem as posed or when the value attains a valid lower bound on it;
 * the restrictions are listed either way.
 */
#include "util/proof_label.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void pb_label_init(pb_label *L, double value)
{
	memset(L, 0, sizeof *L);
	L->value = value;
	L->bound = NAN;
}

void pb_label_restrict(pb_label *L, const char *what)
{
	for (int i = 0; i < L->n_restricted; i++)
		if (!strcmp(L->restricted_by[i], what))
			return;
	if (L->n_restricted < PB_LABEL_MAX)
		L->restricted_by[L->n_restricted++] = what;
}

void pb_label_bound(pb_label *L, double b)
{
	if (isnan(b))
		return;
	if (isnan(L->bound) || b > L->bound)
		L->bound = b;
	if (isfinite(L->value) && L->value <= L->bound + 1e-9 * fabs(L->bound))
		L->optimal = 1;
}

double pb_label_gap(const pb_label *L)
{
	if (L->optimal)
		return 0;
	if (isnan(L->bound) || !isfinite(L->value) || L->value == 0)
		return NAN;
	double g = (L->value - L->bound) / fabs(L->value);
	return g > 0 ? g : 0;
}

void pb_label_json(json_t *obj, const pb_label *L)
{
	json_object_set_new(obj, "optimal", json_boolean(L->optimal));
	json_object_set_new(obj, "bound", isfinite(L->bound) ? json_real(L->bound) : json_null());
	double g = pb_label_gap(L);
	json_object_set_new(obj, "gap", isfinite(g) ? json_real(g) : json_null());
	json_t *r = json_array();
	for (int i = 0; i < L->n_restricted; i++)
		json_array_append_new(r, json_string(L->restricted_by[i]));
	json_object_set_new(obj, "restricted_by", r);
}

char *pb_label_text(const pb_label *L, char *(*fmt)(double, char *, size_t), char *buf, size_t len)
{
	char b[48];
	size_t off;
	if (L->optimal) {
		off = (size_t)snprintf(buf, len, "optimal");
	} else if (isfinite(L->bound)) {
		if (fmt)
			fmt(L->bound, b, sizeof b);
		else
			snprintf(b, sizeof b, "%.6g", L->bound);
		double pct = pb_label_gap(L) * 100; /* 99.996% is not 100% */
		off = (size_t)snprintf(buf, len, "best found, bound %s, gap %.*g%%", b,
		                       pct > 99.9 && pct < 100 ? 6 : 3, pct);
	} else {
		off = (size_t)snprintf(buf, len, "best found, no bound");
	}
	for (int i = 0; i < L->n_restricted && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "; restricted by ",
		                        L->restricted_by[i]);
	return buf;
}
