/*
 * load.c — format detection, the readers, and the analysis that turns a
 * linked Graph into one every solver can use (see load.h for the order).
 *
 * Why here and not in graph.c: the Graph is the model layer's data
 * structure; shape inference and costing are a layer above it (shape/), and
 * a Graph that called them would tie the two layers in a circle. The load
 * module sits above both and runs them in sequence.
 */
#include "load.h"
#include "util/file_door.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/dot_load.h"
#include "model/json_graph.h"
#include "model/onnx_load.h"
#include "shape/cost.h"
#include "shape/shape.h"

/* A stated figure (not NAN) replaces the computed one; FLOPs and parameter
 * bytes follow stated MACs and parameters when not stated themselves. */
static void apply_stated(pb_cost *c, const pb_cost *f)
{
	if (!isnan(f->macs))
		c->macs = f->macs;
	if (!isnan(f->flops))
		c->flops = f->flops;
	else if (!isnan(f->macs))
		c->flops = 2 * f->macs;
	if (!isnan(f->params))
		c->params = f->params;
	if (!isnan(f->param_bytes))
		c->param_bytes = f->param_bytes;
	else if (!isnan(f->params))
		c->param_bytes = 4 * f->params;
	if (!isnan(f->out_bytes))
		c->out_bytes = f->out_bytes;
	if (!isnan(f->in_bytes))
		c->in_bytes = f->in_bytes;
}

int pb_graph_analyse(pb_graph **gp, const pb_load_opts *opts, pb_error *err)
{
	pb_graph *g = *gp;
	if (!g->shapes_given && !(opts && opts->skip_shapes)) {
		int rc = pb_shape_infer(g, err);
		if (rc != PB_OK) {
			pb_graph_free(g);
			*gp = NULL;
			return rc;
		}
	}
	pb_cost_compute(g);
	if (g->stated_cost) {
		for (int i = 0; i < g->n_nodes; i++)
			apply_stated(&g->nodes[i].cost, &g->stated_cost[i]);
		free(g->stated_cost);
		g->stated_cost = NULL;
	}
	pb_cost_totals(g);
	return PB_OK;
}

/* A reader's result, analysed. */
static int analysed(int rc, const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	if (rc != PB_OK)
		return rc;
	return pb_graph_analyse(out, opts, err);
}

int pb_graph_build(pb_builder *b, const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	return analysed(pb_builder_finish(b, opts, out, err), opts, out, err);
}

int pb_onnx_load(const char *path, const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	return analysed(pb_onnx_read(path, opts, out, err), opts, out, err);
}

int pb_onnx_load_buffer(const void *data, size_t len, const char *name, const pb_load_opts *opts,
                        pb_graph **out, pb_error *err)
{
	return analysed(pb_onnx_read_buffer(data, len, name, opts, out, err), opts, out, err);
}

int pb_dot_load(const char *path, const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	return analysed(pb_dot_read(path, opts, out, err), opts, out, err);
}

int pb_dot_load_buffer(const char *text, size_t len, const char *name, const pb_load_opts *opts,
                       pb_graph **out, pb_error *err)
{
	return analysed(pb_dot_read_buffer(text, len, name, opts, out, err), opts, out, err);
}

int pb_json_graph_load(const char *path, const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	return analysed(pb_json_graph_read(path, opts, out, err), opts, out, err);
}

int pb_json_graph_load_buffer(const char *text, size_t len, const char *name,
                              const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	return analysed(pb_json_graph_read_buffer(text, len, name, opts, out, err), opts, out, err);
}

static int has_ext(const char *path, const char *ext)
{
	size_t lp = strlen(path), le = strlen(ext);
	return lp >= le && strcasecmp(path + lp - le, ext) == 0;
}

int pb_graph_load(const char *path, const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	*out = NULL;
	if (has_ext(path, ".onnx"))
		return pb_onnx_load(path, opts, out, err);
	if (has_ext(path, ".dot") || has_ext(path, ".gv"))
		return pb_dot_load(path, opts, out, err);
	if (has_ext(path, ".json"))
		return pb_json_graph_load(path, opts, out, err);
	/* Unknown extension: sniff the first non-blank byte. */
	FILE *f = pb_door_fopen_read(path, PB_DOOR_MODEL, "model", err);
	if (!f)
		return err ? err->code : PB_EINPUT;
	int c;
	while ((c = fgetc(f)) != EOF && (c == ' ' || c == '\n' || c == '\t' || c == '\r'))
		;
	fclose(f);
	if (c == '{')
		return pb_json_graph_load(path, opts, out, err);
	if (c == 'd' || c == 'D' || c == 's' || c == 'g' || c == '/')
		return pb_dot_load(path, opts, out, err);
	return pb_onnx_load(path, opts, out, err);
}
