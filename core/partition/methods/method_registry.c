/*
 * method_registry.c — the partition methods (method_registry.h). Each method
 * is a constant in its own file (method_NAME.c); adding one is that file and
 * one line below. The order is the order of help and error messages.
 */
#include "partition/methods/method_registry.h"

#include <string.h>

#define PB_PART_METHODS(X)                                                                         \
	X(exact)                                                                                   \
	X(milp)                                                                                    \
	X(rl)                                                                                      \
	X(greedy)                                                                                  \
	X(equal)                                                                                   \
	X(local)                                                                                   \
	X(pack)

#define DECLARE(m) extern const pb_part_method pb_part_method_##m;
PB_PART_METHODS(DECLARE)
#define ENTRY(m) &pb_part_method_##m,
static const pb_part_method *const registry[] = {PB_PART_METHODS(ENTRY)};

int pb_part_method_count(void)
{
	return (int)(sizeof registry / sizeof registry[0]);
}

const pb_part_method *pb_part_method_at(int i)
{
	return i >= 0 && i < pb_part_method_count() ? registry[i] : NULL;
}

const pb_part_method *pb_part_method_find(const char *name)
{
	for (int i = 0; name && i < pb_part_method_count(); i++)
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	return NULL;
}

char *pb_part_method_names(char *buf, size_t len, const char *sep)
{
	size_t k = 0;
	if (len)
		buf[0] = '\0';
	for (int i = 0; i < pb_part_method_count() && k < len; i++) {
		int w = snprintf(buf + k, len - k, "%s%s", i ? sep : "", registry[i]->name);
		if (w < 0)
			break;
		k += (size_t)w;
	}
	return buf;
}

int pb_part_method_unknown(pb_error *err, const char *name)
{
	char names[256];
	return pb_err(err, PB_EUSAGE, "partition: unknown method '%s' (%s)", name,
	              pb_part_method_names(names, sizeof names, ", "));
}

int pb_part_method_choices(const char **out, int max)
{
	int n = 0;
	for (int i = 0; i < pb_part_method_count() && n < max; i++)
		out[n++] = registry[i]->name;
	return n;
}

void pb_part_method_help(FILE *out)
{
	fprintf(out, "Methods (--method M), with the options only they read:\n");
	for (int i = 0; i < pb_part_method_count(); i++) {
		const pb_part_method *m = registry[i];
		fprintf(out, "  %-8s %s\n", m->name, m->summary);
		if (!m->options[0])
			continue;
		fprintf(out, "  %-8s options:", "");
		const char *p = m->options;
		while (*p) {
			size_t w = strcspn(p, " ");
			fprintf(out, " --%.*s", (int)w, p);
			p += w;
			p += strspn(p, " ");
		}
		fputc('\n', out);
	}
}
