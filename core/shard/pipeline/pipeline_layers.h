/*
 * shard/pipeline/pipeline_layers.h — the stage split at layer boundaries
 * (pipeline_layers.c), beside the other splits of pipeline_stages.h.
 */
#ifndef PB_SHARD_PIPELINE_LAYERS_H
#define PB_SHARD_PIPELINE_LAYERS_H

#include "shard/pipeline/pipeline_stages.h"

/* The split at layer boundaries: cuts only after the
 * last operator of a repeated block (layer_classes.h), the slowest stage
 * least, then the sum of squared stage costs (equal middle stages, fewer
 * layers where the embedding or the head is); more stages than pieces: cut
 * between any operators (node order). *min_layers / *max_layers:
 * the fewest / most blocks a stage got (0 when cut between operators).
 * PB_EINPUT when the model has no repeated layers or fewer operators than p. */
int pb_pipeline_layers_split(const pb_graph *g, const double *cost, int p, pb_pipe_split *out,
                             int *min_layers, int *max_layers, pb_error *err);

#endif
