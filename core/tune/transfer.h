/*
 * tune/transfer.h — transfer learning for the cost model (issue 42.5, as
 * AutoTVM's transfer learning): the measurements of other shapes of the same
 * operator in a tuning log become training rows of the cost model of a new
 * shape, so its first rounds are ranked by a model instead of by chance.
 *
 * Features are the new shape's own function of each configuration
 * (pb_tune_space_features of the source shape's space: parameter values,
 * register pressure, cache footprints clipped to the shape, edge waste,
 * repacks), so they describe a configuration relative to its shape. Labels
 * are made shape-relative too: each source shape's GFLOP/s are divided by
 * that shape's best and multiplied by the best over all source shapes (one
 * common scale, in GFLOP/s, close to what the new shape can reach).
 */
#ifndef PB_TUNE_TRANSFER_H
#define PB_TUNE_TRANSFER_H

#include "util/error.h"
#include "tune/space.h"

typedef struct pb_tune_transfer {
	float *x; /* n rows of nf features */
	float *y; /* n labels, GFLOP/s on the common scale */
	int n, nf;
	int shapes; /* source shapes that gave rows */
} pb_tune_transfer;

/* Rows from every shape of target's operator in path other than target's
 * own (valid measurements only; invalid ones are rows with label 0). A
 * missing log gives no rows; a malformed line is the error pb_tune_log_load
 * gives (naming path:line). At most max_rows rows (the first shapes' first). */
int pb_tune_transfer_load(const char *path, const pb_tune_space *target, int max_rows,
                          pb_tune_transfer *out, pb_error *err);
void pb_tune_transfer_free(pb_tune_transfer *t);

#endif
