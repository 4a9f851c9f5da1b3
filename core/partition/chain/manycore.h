/*
 * manycore.h — the "manycore" hardware layout (layouts/manycore-*.lua).
 *
 * A many-core chip has `cores` identical cores in a row (or a mesh walked
 * row by row, which gives the same row order). Each core computes `mac_rate`
 * MACs per second and holds `memory` bytes; data moves between core groups at
 * `bandwidth` bytes per second. The reward weights of the method live in the
 * layout too, so one chip description fully defines the environment.
 */
#ifndef PB_MANYCORE_H
#define PB_MANYCORE_H

#include "util/error.h"
#include "hw.h"

enum { PB_REWARD_MAX_TIME = 0, PB_REWARD_WEIGHTED = 1 };

typedef struct pb_manycore {
	char name[64];
	char path[256];
	int cores;
	double mac_rate;          /* MACs per second per core */
	double memory;            /* bytes per core */
	double bandwidth;         /* routing bytes per second */
	int mesh_rows, mesh_cols; /* 0 when no mesh is given */
	int mesh_routed;          /* 1: link_gbs and hop_ns given (a routed mesh) */
	double link_bw;           /* bytes per second of one directed link */
	double hop_s;             /* seconds of latency per hop */
	int routing_yx;           /* 0: XY (columns first), 1: YX (rows first) */
	int io_row, io_col;       /* the I/O core: where the snake placement starts */
	int reward_mode;          /* PB_REWARD_* */
	double reward_a;          /* reward = -a * max(t) in ms + b */
	double reward_b;          /* b when memory fits (default 0) */
	double penalty;           /* b = reward_b - penalty when max storage > memory */
	double w_compute, w_storage, w_routing; /* weighted mode: ms, MiB, ms */
} pb_manycore;

/* Reads a layout of kind "manycore"; errors name the file and the field. */
int pb_manycore_parse(const pb_hw *hw, pb_manycore *out, pb_error *err);

#endif
