/*
 * method_equal.c — `--method equal` (baselines.h): the same number of layers
 * per core, single-core groups. Finishes in its start.
 */
#include "partition/chain/baselines.h"
#include "partition/methods/method.h"

static int equal_start(pb_part_run *r, const pb_hw *hw, const pb_part_opts *o, pb_error *err)
{
	pb_part_equal(r->P, r->ac);
	return PB_OK;
}

const pb_part_method pb_part_method_equal = {
    .name = "equal",
    .summary = "the same number of layers per core, one core per group",
    .options = "",
    .unit = "moves",
    .key = 'Q',
    .start = equal_start,
};
