/*
 * method_pack.c — `--method pack` (baselines.h, pack.c): bisection on the
 * bottleneck time with a greedy packing for each time; never worse than
 * greedy. Finishes in its start.
 */
#include "partition/chain/baselines.h"
#include "partition/methods/method.h"

static int pack_start(pb_part_run *r, const pb_hw *hw, const pb_part_opts *o, pb_error *err)
{
	pb_part_pack(r->P, r->ac);
	return PB_OK;
}

const pb_part_method pb_part_method_pack = {
    .name = "pack",
    .summary = "bisection on the bottleneck time with a greedy packing for each time",
    .options = "",
    .unit = "moves",
    .key = 'P',
    .start = pack_start,
};
