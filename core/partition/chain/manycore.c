/*
 * manycore.c — parses a "manycore" layout (manycore.h) through the checked
 * pb_hw_* accessors, so every error names the file and the field; negative
 * or zero rates, memories and bandwidths are rejected.
 */
#include "partition/chain/manycore.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A required number that must be > 0: a clearer message than a range. */
static int positive(const pb_hw *hw, const char *field, double *out, pb_error *err)
{
	int rc = pb_hw_num(hw, hw->root, "", field, 1, 0, -DBL_MAX, DBL_MAX, out, err);
	if (rc == PB_OK && !(*out > 0))
		rc = pb_err(err, PB_EINPUT, "%s: field '%s' = %g must be a positive number",
		            hw->path, field, *out);
	return rc;
}

/* The routed fields of `mesh` (docs/formats.md): link_gbs and hop_ns go
 * together; routing and io are optional. */
static int mesh_routes(const pb_hw *hw, const json_t *mesh, pb_manycore *out, pb_error *err)
{
	int has_bw = json_object_get(mesh, "link_gbs") != NULL;
	int has_hop = json_object_get(mesh, "hop_ns") != NULL;
	if (!has_bw && !has_hop) {
		const char *extra[] = {"routing", "io"};
		for (int i = 0; i < 2; i++)
			if (json_object_get(mesh, extra[i]))
				return pb_err(
				    err, PB_EINPUT,
				    "%s: field 'mesh.%s' needs mesh.link_gbs and mesh.hop_ns "
				    "(a routed mesh)",
				    hw->path, extra[i]);
		return PB_OK;
	}
	if (has_bw != has_hop)
		return pb_err(err, PB_EINPUT,
		              "%s: field 'mesh': a routed mesh needs both link_gbs and hop_ns "
		              "(only %s given)",
		              hw->path, has_bw ? "link_gbs" : "hop_ns");
	double gbs, ns;
	int rc;
	if ((rc = pb_hw_num(hw, mesh, "mesh", "link_gbs", 1, 0, -DBL_MAX, DBL_MAX, &gbs, err)) ||
	    (rc = pb_hw_num(hw, mesh, "mesh", "hop_ns", 1, 0, -DBL_MAX, DBL_MAX, &ns, err)))
		return rc;
	if (!(gbs > 0) || !(ns >= 0) || !isfinite(gbs) || !isfinite(ns))
		return pb_err(err, PB_EINPUT,
		              "%s: field 'mesh': link_gbs = %g must be > 0 and hop_ns = %g >= 0",
		              hw->path, gbs, ns);
	const char *routing;
	if ((rc = pb_hw_str(hw, mesh, "mesh", "routing", 0, "xy", &routing, err)))
		return rc;
	if (strcmp(routing, "xy") && strcmp(routing, "yx"))
		return pb_err(err, PB_EINPUT,
		              "%s: field 'mesh.routing' = '%s': expected \"xy\" or \"yx\"",
		              hw->path, routing);
	out->routing_yx = strcmp(routing, "yx") == 0;
	const json_t *io = pb_hw_table(hw, mesh, "mesh", "io", 0, err);
	if (!io && err->code)
		return err->code;
	if (io) {
		long r, c;
		if ((rc = pb_hw_int(hw, io, "mesh.io", "row", 1, 0, 0, out->mesh_rows - 1, &r,
		                    err)) ||
		    (rc =
		         pb_hw_int(hw, io, "mesh.io", "col", 1, 0, 0, out->mesh_cols - 1, &c, err)))
			return rc;
		if ((r != 0 && r != out->mesh_rows - 1) || (c != 0 && c != out->mesh_cols - 1))
			return pb_err(
			    err, PB_EINPUT,
			    "%s: field 'mesh.io' = {row = %ld, col = %ld} is not a corner "
			    "of the %d x %d mesh",
			    hw->path, r, c, out->mesh_rows, out->mesh_cols);
		out->io_row = (int)r;
		out->io_col = (int)c;
	}
	out->mesh_routed = 1;
	out->link_bw = gbs * 1e9;
	out->hop_s = ns * 1e-9;
	return PB_OK;
}

int pb_manycore_parse(const pb_hw *hw, pb_manycore *out, pb_error *err)
{
	memset(out, 0, sizeof *out);
	int rc = pb_hw_expect_kind(hw, "manycore", err);
	if (rc)
		return rc;
	const json_t *r = hw->root;
	snprintf(out->name, sizeof out->name, "%s", hw->name);
	snprintf(out->path, sizeof out->path, "%s", hw->path);
	long cores;
	if ((rc = pb_hw_int(hw, r, "", "cores", 1, 0, 1, 4096, &cores, err)))
		return rc;
	out->cores = (int)cores;
	if ((rc = positive(hw, "mac_rate", &out->mac_rate, err)) ||
	    (rc = positive(hw, "memory", &out->memory, err)) ||
	    (rc = positive(hw, "bandwidth", &out->bandwidth, err)))
		return rc;
	pb_err_clear(err);
	const json_t *mesh = pb_hw_table(hw, r, "", "mesh", 0, err);
	if (!mesh && err->code)
		return err->code;
	if (mesh) {
		long rows, cols;
		if ((rc = pb_hw_int(hw, mesh, "mesh", "rows", 1, 0, 1, 4096, &rows, err)) ||
		    (rc = pb_hw_int(hw, mesh, "mesh", "cols", 1, 0, 1, 4096, &cols, err)))
			return rc;
		if (rows * cols != cores)
			return pb_err(err, PB_EINPUT,
			              "%s: field 'mesh': rows x cols = %ld x %ld does not equal "
			              "cores = %ld",
			              hw->path, rows, cols, cores);
		out->mesh_rows = (int)rows;
		out->mesh_cols = (int)cols;
		if ((rc = mesh_routes(hw, mesh, out, err)))
			return rc;
	}
	out->reward_a = 1.0;
	out->penalty = 100.0;
	out->w_compute = 1.0;
	out->w_storage = 0.0;
	out->w_routing = 1.0;
	const json_t *rw = pb_hw_table(hw, r, "", "reward", 0, err);
	if (!rw && err->code)
		return err->code;
	if (rw) {
		const char *mode;
		if ((rc = pb_hw_str(hw, rw, "reward", "mode", 0, "max_time", &mode, err)))
			return rc;
		if (strcmp(mode, "max_time") == 0)
			out->reward_mode = PB_REWARD_MAX_TIME;
		else if (strcmp(mode, "weighted") == 0)
			out->reward_mode = PB_REWARD_WEIGHTED;
		else
			return pb_err(err, PB_EINPUT,
			              "%s: field 'reward.mode' = '%s': expected \"max_time\" or "
			              "\"weighted\"",
			              hw->path, mode);
		if ((rc = pb_hw_num(hw, rw, "reward", "a", 0, 1.0, 0, DBL_MAX, &out->reward_a,
		                    err)) ||
		    (rc = pb_hw_num(hw, rw, "reward", "b", 0, 0.0, -DBL_MAX, DBL_MAX,
		                    &out->reward_b, err)) ||
		    (rc = pb_hw_num(hw, rw, "reward", "penalty", 0, 100.0, 0, DBL_MAX,
		                    &out->penalty, err)))
			return rc;
		const json_t *w = pb_hw_table(hw, rw, "reward", "weights", 0, err);
		if (!w && err->code)
			return err->code;
		if (w && ((rc = pb_hw_num(hw, w, "reward.weights", "compute", 0, 1.0, 0, DBL_MAX,
		                          &out->w_compute, err)) ||
		          (rc = pb_hw_num(hw, w, "reward.weights", "storage", 0, 0.0, 0, DBL_MAX,
		                          &out->w_storage, err)) ||
		          (rc = pb_hw_num(hw, w, "reward.weights", "routing", 0, 1.0, 0, DBL_MAX,
		                          &out->w_routing, err))))
			return rc;
	}
	return PB_OK;
}
