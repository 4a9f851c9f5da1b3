/*
 * shard/memory_margin.h — the memory headroom of a plan (issue 38): a device
 * of device_memory_gb may be planned to device_memory_usable of it (the
 * layout's field, default PB_MEMORY_USABLE, cluster.h); the rest is left to
 * the CUDA context, the communication library's buffers and the allocator's
 * fragmentation. The margin is what a plan leaves of that limit.
 */
#ifndef PB_SHARD_MEMORY_MARGIN_H
#define PB_SHARD_MEMORY_MARGIN_H

#include <jansson.h>
#include <stdio.h>

#include "shard/cluster.h"

/* Sets "memory_device" (bytes), "memory_usable" (fraction) and
 * "memory_margin" (bytes of the limit left; negative: over it) in o. */
void pb_memory_margin_json(json_t *o, const pb_cluster *cl, double used);
/* "memory limit: 72.00 GB = 90% of 80.00 GB per device (device_memory_usable);
 * margin 1.23 GB" */
void pb_memory_margin_text(FILE *f, const pb_cluster *cl, double used);

#endif
