/*
 * fuzz_session.c — libFuzzer target for the session file loader
 * (pb_session_load, core/session.h).
 *
 * The loader reads a path, so each input is written to a file under /tmp
 * (fuzz_target.h). The session names a model, input overrides, a layout and a
 * plan; the files it names are opened relative to the working directory
 * (`make fuzz` runs from the repository root, where the seeds' models/ and
 * layouts/ are). A session that loads is walked (graph, overrides, layout,
 * the plan against the graph) and saved: the saved file must load again to
 * the same plan. Seeds: tests/fuzz/seeds/fuzz_session/ (`save` of sessions).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_target.h"
#include "session.h"

static double walk(pb_session *s)
{
	const pb_graph *g = s->graph;
	if (!g)
		abort(); /* a loaded session has a model */
	double sum = g->total.macs;
	const char *const *names = pb_session_node_names(s);
	for (int i = 0; i < g->n_nodes; i++)
		sum += (double)strlen(names[i]) + g->nodes[i].n_succs;
	for (int k = 0; k < s->n_overrides; k++) {
		sum += (double)strlen(s->overrides[k].name);
		for (int d = 0; d < s->overrides[k].rank; d++)
			sum += (double)s->overrides[k].dims[d];
	}
	if (s->hw)
		sum += (double)strlen(s->hw->kind) + (double)strlen(s->hw->name);
	if (s->plan) {
		if (s->plan->n_nodes != g->n_nodes)
			abort(); /* the loader checks the plan against the model */
		for (int i = 0; i < s->plan->n_nodes; i++)
			sum += s->plan->group[i];
	}
	return sum + (double)strlen(s->view.find) + (double)s->view.sel;
}

/* Saving the session and loading the file again gives the same plan. */
static void round_trip(pb_session *s)
{
	char path[64];
	if (fuzz_tmp_write((const uint8_t *)"", 0, path))
		return;
	pb_error err = {0};
	if (pb_session_save(s, path, &err) != PB_OK) {
		unlink(path);
		return; /* e.g. /tmp full: not the loader's fault */
	}
	pb_session *t = pb_session_new();
	if (pb_session_load(t, path, &err) != PB_OK)
		abort();
	unlink(path);
	if (!s->plan != !t->plan || t->graph->n_nodes != s->graph->n_nodes ||
	    t->n_overrides != s->n_overrides || !s->hw != !t->hw ||
	    memcmp(&s->view, &t->view, sizeof s->view))
		abort();
	if (s->plan && memcmp(s->plan->group, t->plan->group,
	                      (size_t)s->plan->n_nodes * sizeof *s->plan->group))
		abort();
	pb_session_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	if (fuzz_tmp_write(data, size, path))
		return 0;
	pb_session *s = pb_session_new();
	pb_error err = {0};
	int rc = pb_session_load(s, path, &err);
	unlink(path);
	if (rc == PB_OK) {
		(void)walk(s);
		round_trip(s);
	} else if (s->graph || s->plan || s->hw) {
		abort(); /* a failed load leaves the session as it was */
	}
	pb_session_free(s);
	return 0;
}
