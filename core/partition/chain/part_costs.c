/*
 * part_costs.c — measured kernel times for the chain partition (part_costs.h):
 * a tuning log's times per node, which replace MACs / rate where they exist.
 */
#include "partition/chain/part_costs.h"

#include <stdlib.h>

#include "tune/node_costs.h"

int pb_part_load_costs(const pb_graph *g, const char *log_path, double **times, int *n_found,
                       pb_error *err)
{
	*times = malloc(((size_t)g->n_nodes + 1) * sizeof **times);
	if (!*times)
		return pb_err(err, PB_ENOMEM, "partition: out of memory");
	int rc = pb_tune_node_times(g, log_path, *times, n_found, err);
	if (rc == PB_OK && *n_found == 0)
		rc = pb_err(err, PB_EINPUT,
		            "%s: the tuning log has no measurement for any node of %s (tune some "
		            "first: partbench tune MODEL --node NAME --log %s)",
		            log_path, g->path, log_path);
	if (rc) {
		free(*times);
		*times = NULL;
	}
	return rc;
}
