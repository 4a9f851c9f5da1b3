/*
 * method_greedy.c — `--method greedy` (baselines.h): for every group count
 * cut where the running MACs cross equal shares, cores by storage then to
 * the slowest group; the best count. Finishes in its start.
 */
#include "partition/chain/baselines.h"
#include "partition/methods/method.h"

static int greedy_start(pb_part_run *r, const pb_hw *hw, const pb_part_opts *o, pb_error *err)
{
	pb_part_greedy(r->P, r->ac);
	return PB_OK;
}

const pb_part_method pb_part_method_greedy = {
    .name = "greedy",
    .summary = "cuts at equal shares of the MACs for every group count, cores to the slowest "
               "group; the best count",
    .options = "",
    .unit = "moves",
    .key = 'G',
    .start = greedy_start,
};
