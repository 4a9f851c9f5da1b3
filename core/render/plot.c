/*
 * plot.c — plot kinds, the JSON-lines reader and the dispatch to the charts
 * (see plot.h).
 */
#include "render/plot.h"
#include "util/file_door.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/atomic_file.h"

int pb_plot_kind_parse(const char *s, int *kind, pb_error *err)
{
	static const char *names[] = {"training", "tune", "load", "timeline"};
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*kind = i;
			return PB_OK;
		}
	return pb_err(err, PB_EUSAGE, "plot: unknown kind '%s' (training, tune, load, timeline)",
	              s);
}

int pb_jsonl_load(const char *path, json_t **out, pb_error *err)
{
	*out = NULL;
	FILE *f = pb_door_fopen_read(path, PB_DOOR_DATA, "log", err);
	if (!f)
		return err ? err->code : PB_EINPUT;
	/* A whole-file JSON array is accepted too. */
	int c;
	while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r')
		;
	if (c == '[') {
		rewind(f);
		json_error_t je;
		json_t *a = json_loadf(f, 0, &je);
		fclose(f);
		if (!a)
			return pb_err(err, PB_EINPUT, "%s:%d:%d: %s", path, je.line, je.column,
			              je.text);
		*out = a;
		return PB_OK;
	}
	rewind(f);
	json_t *arr = json_array();
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int lineno = 0;
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || *p == '\r' || *p == '\0' || *p == '#')
			continue;
		json_error_t je;
		json_t *o = json_loads(p, JSON_DECODE_ANY, &je);
		if (!o || !json_is_object(o)) {
			json_decref(o);
			free(line);
			fclose(f);
			json_decref(arr);
			return pb_err(err, PB_EINPUT, "%s:%d: %s", path, lineno,
			              o ? "expected a JSON object per line" : je.text);
		}
		json_array_append_new(arr, o);
	}
	free(line);
	fclose(f);
	*out = arr;
	return PB_OK;
}

int pb_plot_render(int kind, const char *src, const pb_plan *plan, const pb_plot_opts *o,
                   char **svg, size_t *len, pb_error *err)
{
	*svg = NULL;
	*len = 0;
	pb_plot_opts opts = {0};
	if (o)
		opts = *o;
	if (opts.width <= 0)
		opts.width = 900;
	json_t *records = NULL;
	int rc = PB_OK;
	if (kind == PB_PLOT_TRAINING || kind == PB_PLOT_TUNE) {
		if ((rc = pb_jsonl_load(src, &records, err)) != PB_OK)
			return rc;
	} else if (!plan) {
		return pb_err(err, PB_EUSAGE, "plot: no plan given");
	}
	char *buf = NULL;
	size_t blen = 0;
	FILE *f = open_memstream(&buf, &blen);
	if (!f) {
		json_decref(records);
		return pb_err(err, PB_ENOMEM, "plot: out of memory");
	}
	switch (kind) {
	case PB_PLOT_TRAINING:
		rc = pb_plot_training(records, src, &opts, f, err);
		break;
	case PB_PLOT_TUNE:
		rc = pb_plot_tune(records, src, &opts, f, err);
		break;
	case PB_PLOT_LOAD:
		rc = pb_plot_load(plan, src, &opts, f, err);
		break;
	case PB_PLOT_TIMELINE:
		rc = pb_plot_timeline(plan, src, &opts, f, err);
		break;
	default:
		rc = pb_err(err, PB_EUSAGE, "plot: unknown kind %d", kind);
	}
	fclose(f);
	json_decref(records);
	if (rc) {
		free(buf);
		return rc;
	}
	*svg = buf;
	*len = blen;
	return PB_OK;
}

int pb_plot_write(const char *path, const char *svg, size_t len, pb_error *err)
{
	return pb_write_file_atomic(path, svg, len, err);
}
