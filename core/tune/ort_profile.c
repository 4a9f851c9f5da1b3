/*
 * tune/ort_profile.c — per-node times from an ONNX Runtime profile (see
 * ort_profile.h).
 */
#include "tune/ort_profile.h"
#include "util/file_door.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

int pb_ort_profile_sniff(const char *path)
{
	FILE *f = pb_door_fopen_read(path, PB_DOOR_DATA, "profile", NULL);
	if (!f)
		return 0;
	char buf[64];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = buf;
	while (*p && isspace((unsigned char)*p))
		p++;
	return *p == '[' || strncmp(p, "{\"traceEvents\"", 14) == 0;
}

/* The node an event name (without "_kernel_time") stands for, or -1. */
static int event_node(const pb_graph *g, char *name)
{
	int v = pb_graph_find_node(g, name);
	if (v >= 0)
		return v;
	static const char *const suffixes[] = {"_nchwc", "_token", ""};
	for (int i = 0; suffixes[i][0]; i++) {
		size_t n = strlen(name), s = strlen(suffixes[i]);
		if (n > s && strcmp(name + n - s, suffixes[i]) == 0) {
			name[n - s] = 0;
			int t = pb_graph_find_tensor(g, name);
			name[n - s] = suffixes[i][0];
			if (t >= 0 && g->tensors[t].producer >= 0)
				return g->tensors[t].producer;
		}
	}
	int t = pb_graph_find_tensor(g, name);
	return t >= 0 ? g->tensors[t].producer : -1;
}

int pb_ort_profile_times(const pb_graph *g, const char *path, double *times, int *n_found,
                         pb_error *err)
{
	json_error_t je;
	pb_error open_err = {0};
	json_t *root = pb_door_load_json(path, 0, PB_DOOR_DATA, "profile", &je, &open_err);
	if (!root && je.line < 0) /* not opened (missing, a FIFO, refused to a script) */
		return pb_err(err, open_err.code, "%s", open_err.msg);
	if (!root)
		return pb_err(err, PB_EINPUT, "%s: not an ONNX Runtime profile: %s (line %d)", path,
		              je.text, je.line);
	json_t *ev = json_is_object(root) ? json_object_get(root, "traceEvents") : root;
	if (!json_is_array(ev)) {
		json_decref(root);
		return pb_err(err, PB_EINPUT,
		              "%s: not an ONNX Runtime profile (expected a JSON array of trace "
		              "events)",
		              path);
	}
	for (int i = 0; i < g->n_nodes; i++)
		times[i] = 0;
	int runs = 0, node_events = 0, matched = 0, max_count = 0;
	int *count = calloc((size_t)g->n_nodes + 1, sizeof *count);
	if (!count) {
		json_decref(root);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", path);
	}
	size_t i;
	json_t *e;
	json_array_foreach(ev, i, e)
	{
		const char *cat = json_string_value(json_object_get(e, "cat"));
		const char *name = json_string_value(json_object_get(e, "name"));
		if (!cat || !name)
			continue;
		if (strcmp(cat, "Session") == 0 && strcmp(name, "model_run") == 0) {
			runs++;
			continue;
		}
		size_t n = strlen(name);
		const char *suffix = "_kernel_time";
		if (strcmp(cat, "Node") != 0 || n <= 12 || strcmp(name + n - 12, suffix) != 0)
			continue;
		node_events++;
		const json_t *dur = json_object_get(e, "dur");
		if (!json_is_number(dur) || json_number_value(dur) < 0)
			continue;
		char *base = strndup(name, n - 12);
		int v = base ? event_node(g, base) : -1;
		free(base);
		if (v < 0)
			continue;
		times[v] += json_number_value(dur) * 1e-6;
		if (++count[v] > max_count)
			max_count = count[v];
		matched++;
	}
	json_decref(root);
	int found = 0, rc = PB_OK;
	if (runs == 0)
		runs = max_count; /* a trace cut before its run events: one event per run */
	for (int v = 0; v < g->n_nodes; v++) {
		if (count[v] && runs > 0) {
			times[v] /= runs;
			found++;
		} else {
			times[v] = NAN;
		}
	}
	free(count);
	if (node_events == 0)
		rc = pb_err(err, PB_EINPUT,
		            "%s: the profile has no node events (was it written with profiling on, "
		            "by a session that ran the model?)",
		            path);
	else if (2 * matched < node_events)
		rc = pb_err(err, PB_EINPUT,
		            "%s: only %d of its %d node events name a node of %s (a profile of "
		            "another model?)",
		            path, matched, node_events, g->path ? g->path : "the model");
	if (n_found)
		*n_found = found;
	return rc;
}
