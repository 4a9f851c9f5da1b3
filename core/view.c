/*
 * view.c — reading and writing the session's "key=value;..." view string.
 *
 * Algorithm: linear scans over the string (it is at most a few hundred
 * bytes). Invariant: keys are unique; values never contain a raw ';' or '='
 * (they are percent-encoded), so splitting on ';' then '=' is unambiguous.
 */
#include "view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void decode(const char *s, size_t n, char *buf, size_t len)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k + 1 < len; i++) {
		if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
			buf[k++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
			continue;
		}
		buf[k++] = s[i];
	}
	if (len)
		buf[k] = 0;
}

/* Finds key; returns the start of its entry and sets the value span. */
static const char *find_key(const char *view, const char *key, const char **vs, size_t *vn)
{
	size_t kl = strlen(key);
	const char *p = view;
	while (p && *p) {
		const char *end = strchr(p, ';');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
			*vs = p + kl + 1;
			*vn = n - kl - 1;
			return p;
		}
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

int pb_view_get(const char *view, const char *key, const char *dflt, char *buf, size_t len)
{
	const char *vs;
	size_t vn;
	if (view && find_key(view, key, &vs, &vn)) {
		decode(vs, vn, buf, len);
		return 1;
	}
	snprintf(buf, len, "%s", dflt ? dflt : "");
	return 0;
}

long pb_view_get_int(const char *view, const char *key, long dflt)
{
	char buf[64], *end;
	if (!pb_view_get(view, key, NULL, buf, sizeof buf) || !buf[0])
		return dflt;
	long v = strtol(buf, &end, 10);
	return *end ? dflt : v;
}

int pb_view_set(char *view, size_t cap, const char *key, const char *value)
{
	char *out = malloc(cap + 1);
	size_t k = 0, kl = strlen(key);
	int ok = 1;
	if (!out)
		return -1;
	/* copy every other entry */
	const char *p = view;
	while (*p) {
		const char *end = strchr(p, ';');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		int same = n > kl && strncmp(p, key, kl) == 0 && p[kl] == '=';
		if (n && !same) {
			if (k + n + 1 >= cap) {
				ok = 0;
				break;
			}
			if (k)
				out[k++] = ';';
			memcpy(out + k, p, n);
			k += n;
		}
		p = end ? end + 1 : p + n;
	}
	if (ok && value) {
		size_t need = kl + 1 + (k ? 1 : 0);
		if (k + need >= cap)
			ok = 0;
		else {
			if (k)
				out[k++] = ';';
			memcpy(out + k, key, kl);
			k += kl;
			out[k++] = '=';
			for (const char *v = value; *v && ok; v++) {
				if (*v == ';' || *v == '=' || *v == '%') {
					if (k + 3 >= cap)
						ok = 0;
					else
						k += (size_t)snprintf(out + k, 4, "%%%02X",
						                      (unsigned char)*v);
				} else if (k + 1 >= cap) {
					ok = 0;
				} else {
					out[k++] = *v;
				}
			}
		}
	}
	if (ok) {
		out[k] = 0;
		memcpy(view, out, k + 1);
	}
	free(out);
	return ok ? 0 : -1;
}

int pb_view_set_int(char *view, size_t cap, const char *key, long value)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%ld", value);
	return pb_view_set(view, cap, key, buf);
}
