/*
 * quotient.c — igraph acyclicity check of a contracted graph (quotient.h).
 *
 * Builds the contracted edge list (classes < 0 are left out) (duplicates kept: igraph_is_dag does
 * not mind them) and asks igraph_is_dag; O(V + E) per call.
 */
#include "transform/quotient.h"

#include "util/lazy_igraph.h"

int pb_quotient_is_dag(const pb_graph *g, const int *cls, int internal_ok, int *is_dag,
                       pb_error *err)
{
	igraph_integer_t n_edges = 0;
	for (int v = 0; v < g->n_nodes; v++)
		n_edges += g->nodes[v].n_succs;
	igraph_vector_int_t edges;
	if (igraph_vector_int_init(&edges, 2 * n_edges) != IGRAPH_SUCCESS)
		return pb_err(err, PB_ENOMEM, "%s: out of memory (igraph)", g->path);
	igraph_integer_t k = 0;
	for (int v = 0; v < g->n_nodes; v++)
		for (int j = 0; j < g->nodes[v].n_succs; j++) {
			int a = cls[v], b = cls[g->nodes[v].succs[j]];
			if (a < 0 || b < 0 || (a == b && internal_ok))
				continue;
			VECTOR(edges)[k++] = a;
			VECTOR(edges)[k++] = b;
		}
	igraph_vector_int_resize(&edges, k);
	igraph_t ig;
	if (igraph_create(&ig, &edges, g->n_nodes, IGRAPH_DIRECTED) != IGRAPH_SUCCESS) {
		igraph_vector_int_destroy(&edges);
		return pb_err(err, PB_ENOMEM, "%s: cannot build the contracted graph (igraph)",
		              g->path);
	}
	igraph_bool_t dag = 0;
	int rc = PB_OK;
	if (igraph_is_dag(&ig, &dag) != IGRAPH_SUCCESS)
		rc = pb_err(err, PB_EINTERNAL, "%s: igraph_is_dag failed", g->path);
	*is_dag = dag ? 1 : 0;
	igraph_destroy(&ig);
	igraph_vector_int_destroy(&edges);
	return rc;
}
