/*
 * view.c — the session's view (view.h): the typed struct, and its saved form
 * "key=value;...".
 *
 * Algorithm: linear scans over the string (it is at most a few hundred
 * bytes). Invariant: keys are unique; values never contain a raw ';' or '='
 * (they are percent-encoded), so splitting on ';' then '=' is unambiguous.
 * The struct and the string meet in one table of keys (KEYS below): each key
 * reads its field from text and writes it as text, and says whether the
 * field holds its default (then the saved form leaves it out).
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

/* ---- the typed view ---- */

static const char *const COLOR_NAMES[] = {"group", "op", "branch", "none"};

const char *pb_view_color_name(pb_view_color c)
{
	return (unsigned)c < 4 ? COLOR_NAMES[c] : "group";
}

void pb_view_init(pb_view *v)
{
	memset(v, 0, sizeof *v);
	v->sel = -1;
	v->depth = -1;
	v->follow = 1;
	v->mouse = 1;
}

static int parse_long(const char *s, long *out)
{
	char *end;
	if (!s || !*s)
		return -1;
	*out = strtol(s, &end, 10);
	return *end ? -1 : 0;
}

/* "a-b,c-d" into the open ranges; 0, or -1 when malformed or too many. */
static int parse_open(pb_view *v, const char *s)
{
	pb_view t = *v;
	t.n_open = 0;
	for (const char *p = s; *p;) {
		long a, b;
		int used = 0;
		if (t.n_open == PB_VIEW_OPEN_MAX || sscanf(p, "%ld-%ld%n", &a, &b, &used) != 2)
			return -1;
		t.open_first[t.n_open] = a;
		t.open_last[t.n_open++] = b;
		p += used;
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	*v = t;
	return 0;
}

static void format_open(const pb_view *v, char *buf, size_t len)
{
	size_t k = 0;
	buf[0] = 0;
	for (int i = 0; i < v->n_open && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%ld-%ld", i ? "," : "", v->open_first[i],
		                      v->open_last[i]);
}

/* One key of the saved form: its field as text (buf), or "" for the default;
 * set from text (NULL: default), 0 or -1 for a bad value. */
typedef struct view_key {
	const char *name;
	void (*get)(const pb_view *v, char *buf, size_t len);
	int (*set)(pb_view *v, const char *s);
} view_key;

#define VIEW_INT_KEY(field, dflt, lo, hi)                                                          \
	static void get_##field(const pb_view *v, char *buf, size_t len)                           \
	{                                                                                          \
		if (v->field == (dflt))                                                            \
			buf[0] = 0;                                                                \
		else                                                                               \
			snprintf(buf, len, "%ld", (long)v->field);                                 \
	}                                                                                          \
	static int set_##field(pb_view *v, const char *s)                                          \
	{                                                                                          \
		long x = (dflt);                                                                   \
		if (s && parse_long(s, &x) != 0)                                                   \
			return -1;                                                                 \
		if (x < (lo) || x > (hi))                                                          \
			return -1;                                                                 \
		v->field = x;                                                                      \
		return 0;                                                                          \
	}

VIEW_INT_KEY(zoom, 0, 0, 2)
VIEW_INT_KEY(x, 0, -1000000000L, 1000000000L)
VIEW_INT_KEY(y, 0, -1000000000L, 1000000000L)
VIEW_INT_KEY(sel, -1, -1, 2000000000L)
VIEW_INT_KEY(depth, -1, -1, 64)
VIEW_INT_KEY(follow, 1, 0, 1)
VIEW_INT_KEY(mouse, 1, 0, 1)
VIEW_INT_KEY(constants, 0, 0, 1)
VIEW_INT_KEY(fit, 0, 0, 1)
VIEW_INT_KEY(center, 0, 0, 1)
VIEW_INT_KEY(top, 0, 0, 1)
VIEW_INT_KEY(chip, 0, 0, 1)

static void get_color(const pb_view *v, char *buf, size_t len)
{
	snprintf(buf, len, "%s", v->color == PB_VIEW_BY_GROUP ? "" : pb_view_color_name(v->color));
}

static int set_color(pb_view *v, const char *s)
{
	for (int i = 0; i < 4; i++)
		if (!s || strcmp(s, COLOR_NAMES[i]) == 0) {
			v->color = s ? (pb_view_color)i : PB_VIEW_BY_GROUP;
			return 0;
		}
	return -1;
}

static void get_dir(const pb_view *v, char *buf, size_t len)
{
	snprintf(buf, len, "%s", v->lr ? "LR" : "");
}

static int set_dir(pb_view *v, const char *s)
{
	if (s && strcmp(s, "LR") && strcmp(s, "TB"))
		return -1;
	v->lr = s && strcmp(s, "LR") == 0;
	return 0;
}

static void get_open(const pb_view *v, char *buf, size_t len)
{
	format_open(v, buf, len);
}

static int set_open(pb_view *v, const char *s)
{
	return parse_open(v, s ? s : "");
}

static void get_find(const pb_view *v, char *buf, size_t len)
{
	snprintf(buf, len, "%s", v->find);
}

static int set_find(pb_view *v, const char *s)
{
	if (s && strlen(s) >= sizeof v->find)
		return -1;
	snprintf(v->find, sizeof v->find, "%s", s ? s : "");
	return 0;
}

/* In the order of the saved form. */
static const view_key KEYS[] = {
    {"zoom", get_zoom, set_zoom},
    {"x", get_x, set_x},
    {"y", get_y, set_y},
    {"sel", get_sel, set_sel},
    {"color", get_color, set_color},
    {"dir", get_dir, set_dir},
    {"depth", get_depth, set_depth},
    {"open", get_open, set_open},
    {"find", get_find, set_find},
    {"follow", get_follow, set_follow},
    {"mouse", get_mouse, set_mouse},
    {"constants", get_constants, set_constants},
    {"fit", get_fit, set_fit},
    {"center", get_center, set_center},
    {"top", get_top, set_top},
    {"chip", get_chip, set_chip},
};
enum { N_KEYS = sizeof KEYS / sizeof KEYS[0] };

static const view_key *find_view_key(const char *name)
{
	for (int i = 0; i < N_KEYS; i++)
		if (strcmp(KEYS[i].name, name) == 0)
			return &KEYS[i];
	return NULL;
}

int pb_view_set_key(pb_view *v, const char *key, const char *value, pb_error *err)
{
	const view_key *k = find_view_key(key);
	if (!k) {
		char names[200];
		size_t n = 0;
		names[0] = 0;
		for (int i = 0; i < N_KEYS && n < sizeof names; i++)
			n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? " " : "",
			                      KEYS[i].name);
		return pb_err(err, PB_EUSAGE, "view: no key '%s' (keys: %s)", key, names);
	}
	if (k->set(v, value && value[0] ? value : NULL) != 0)
		return pb_err(err, PB_EUSAGE, "view: bad value '%s' for key '%s'", value, key);
	return PB_OK;
}

void pb_view_parse(pb_view *v, const char *text)
{
	pb_view_init(v);
	char buf[PB_VIEW_FIND_MAX + 64];
	for (int i = 0; i < N_KEYS; i++)
		if (text && pb_view_get(text, KEYS[i].name, NULL, buf, sizeof buf))
			KEYS[i].set(v, buf[0] ? buf : NULL);
}

int pb_view_format(const pb_view *v, char *buf, size_t len)
{
	char val[PB_VIEW_FIND_MAX + 64];
	int rc = 0;
	if (len)
		buf[0] = 0;
	for (int i = 0; i < N_KEYS; i++) {
		KEYS[i].get(v, val, sizeof val);
		if (val[0] && pb_view_set(buf, len, KEYS[i].name, val) != 0)
			rc = -1;
	}
	return rc;
}
