/*
 * args.c — table-driven option parsing and help (see args.h).
 */
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int find_long(const pb_opt *spec, const char *name, size_t len)
{
	for (int i = 0; spec && spec[i].name; i++)
		if (strlen(spec[i].name) == len && strncmp(spec[i].name, name, len) == 0)
			return i;
	return -1;
}

static int find_short(const pb_opt *spec, char c)
{
	for (int i = 0; spec && spec[i].name; i++)
		if (spec[i].short_name == c)
			return i;
	return -1;
}

static int store(pb_args *a, int k, const char *v, const char *cmd, pb_error *err)
{
	if (a->spec[k].type == PB_OPT_LIST) {
		if (a->set[k] >= PB_ARGS_MAX_LIST)
			return pb_err(err, PB_EUSAGE, "%s: too many --%s options (at most %d)", cmd,
			              a->spec[k].name, PB_ARGS_MAX_LIST);
		a->list[k][a->set[k]] = v;
	}
	a->set[k]++;
	a->val[k] = v;
	return PB_OK;
}

int pb_args_parse(const pb_opt *spec, int argc, char **argv, pb_args *a, const char *cmd,
                  pb_error *err)
{
	memset(a, 0, sizeof *a);
	a->spec = spec;
	while (spec && spec[a->n_spec].name)
		a->n_spec++;
	int only_pos = 0;
	for (int i = 0; i < argc; i++) {
		const char *s = argv[i];
		if (only_pos || s[0] != '-' || s[1] == '\0' || (s[1] >= '0' && s[1] <= '9')) {
			if (a->n_pos >= PB_ARGS_MAX_POS)
				return pb_err(err, PB_EUSAGE, "%s: too many arguments", cmd);
			a->pos[a->n_pos++] = s;
			continue;
		}
		if (strcmp(s, "--") == 0) {
			only_pos = 1;
			continue;
		}
		if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) {
			a->help = 1;
			continue;
		}
		int k;
		const char *inline_val = NULL;
		if (s[1] == '-') {
			const char *name = s + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			k = find_long(spec, name, len);
			if (eq)
				inline_val = eq + 1;
			if (k < 0)
				return pb_err(err, PB_EUSAGE,
				              "%s: unknown option '--%.*s' (see '%s --help')", cmd,
				              (int)len, name, cmd);
		} else {
			k = find_short(spec, s[1]);
			if (k < 0)
				return pb_err(err, PB_EUSAGE,
				              "%s: unknown option '-%c' (see '%s --help')", cmd,
				              s[1], cmd);
			if (s[2])
				inline_val = s + 2;
		}
		if (spec[k].type == PB_OPT_FLAG) {
			if (inline_val)
				return pb_err(err, PB_EUSAGE, "%s: option --%s takes no value", cmd,
				              spec[k].name);
			a->set[k]++;
			continue;
		}
		const char *v = inline_val;
		if (!v) {
			if (i + 1 >= argc)
				return pb_err(err, PB_EUSAGE, "%s: option --%s needs a value (%s)",
				              cmd, spec[k].name,
				              spec[k].metavar ? spec[k].metavar : "VALUE");
			v = argv[++i];
		}
		int rc = store(a, k, v, cmd, err);
		if (rc)
			return rc;
	}
	return PB_OK;
}

static int index_of(const pb_args *a, const char *name)
{
	for (int i = 0; i < a->n_spec; i++)
		if (strcmp(a->spec[i].name, name) == 0)
			return i;
	return -1;
}

int pb_args_has(const pb_args *a, const char *name)
{
	int k = index_of(a, name);
	return k >= 0 && a->set[k] > 0;
}

const char *pb_args_str(const pb_args *a, const char *name, const char *dflt)
{
	int k = index_of(a, name);
	return (k >= 0 && a->set[k] && a->val[k]) ? a->val[k] : dflt;
}

int pb_args_int(const pb_args *a, const char *name, long dflt, long min, long max, long *out,
                pb_error *err)
{
	const char *s = pb_args_str(a, name, NULL);
	if (!s) {
		*out = dflt;
		return PB_OK;
	}
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return pb_err(err, PB_EUSAGE, "--%s '%s': expected an integer from %ld to %ld",
		              name, s, min, max);
	*out = v;
	return PB_OK;
}

int pb_args_double(const pb_args *a, const char *name, double dflt, double min, double max,
                   double *out, pb_error *err)
{
	const char *s = pb_args_str(a, name, NULL);
	if (!s) {
		*out = dflt;
		return PB_OK;
	}
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < min || v > max)
		return pb_err(err, PB_EUSAGE, "--%s '%s': expected a number from %g to %g", name, s,
		              min, max);
	*out = v;
	return PB_OK;
}

int pb_args_list(const pb_args *a, const char *name, const char ***out)
{
	int k = index_of(a, name);
	if (k < 0 || !a->set[k]) {
		*out = NULL;
		return 0;
	}
	*out = (const char **)a->list[k];
	return a->set[k];
}

const char *pb_args_pos(const pb_args *a, int i)
{
	return (i >= 0 && i < a->n_pos) ? a->pos[i] : NULL;
}

void pb_args_print_options(const pb_opt *spec, FILE *out)
{
	fprintf(out, "Options:\n");
	for (int i = 0; spec && spec[i].name; i++) {
		char left[64];
		const char *mv = spec[i].type == PB_OPT_FLAG
		                     ? ""
		                     : (spec[i].metavar ? spec[i].metavar : "VALUE");
		if (spec[i].short_name)
			snprintf(left, sizeof left, "-%c, --%s%s%s", spec[i].short_name,
			         spec[i].name, *mv ? " " : "", mv);
		else
			snprintf(left, sizeof left, "    --%s%s%s", spec[i].name, *mv ? " " : "",
			         mv);
		fprintf(out, "  %-28s ", left);
		const char *v[32];
		int nv = spec[i].choices ? spec[i].choices(v, 32) : 0;
		for (int k = 0; k < nv; k++)
			fprintf(out, "%s%s", k ? "|" : "", v[k]);
		fprintf(out, "%s%s\n", nv ? " " : "", spec[i].help ? spec[i].help : "");
	}
	fprintf(out, "  %-28s %s\n", "-h, --help", "show this help");
}
