/*
 * lazy_igraph.h — igraph, loaded on first use (dlopen) instead of at start-up.
 *
 * Why: linking libigraph pulls LAPACK, ARPACK, gfortran, libxml2 and ICU into
 * every partbench process; their relocations and constructors cost ~7 ms of
 * the ~17 ms start-up, although only DAG checks and fusion use igraph. Files
 * include this header instead of <igraph.h>; the igraph calls they make are
 * redirected by the macros below to function pointers resolved once from
 * libigraph.so.3. The types and macros (igraph_t, VECTOR) come from igraph's
 * own header. When the library cannot be loaded, every call fails with
 * IGRAPH_FAILURE (sizes read as 0) and pb_igraph_error() says why.
 * igraph's error handler is set to "ignore" on load, so a failing call
 * returns an error code instead of aborting the process (DESIGN rule 6).
 */
#ifndef PB_LAZY_IGRAPH_H
#define PB_LAZY_IGRAPH_H

#include <igraph.h>

typedef struct pb_igraph_api {
	igraph_error_t (*create)(igraph_t *, const igraph_vector_int_t *, igraph_integer_t,
	                         igraph_bool_t);
	void (*destroy)(igraph_t *);
	igraph_error_t (*edge)(const igraph_t *, igraph_integer_t, igraph_integer_t *,
	                       igraph_integer_t *);
	igraph_error_t (*feedback_arc_set)(const igraph_t *, igraph_vector_int_t *,
	                                   const igraph_vector_t *, igraph_fas_algorithm_t);
	igraph_error_t (*is_dag)(const igraph_t *, igraph_bool_t *);
	igraph_error_t (*topological_sorting)(const igraph_t *, igraph_vector_int_t *,
	                                      igraph_neimode_t);
	igraph_error_t (*vector_int_init)(igraph_vector_int_t *, igraph_integer_t);
	void (*vector_int_destroy)(igraph_vector_int_t *);
	igraph_error_t (*vector_int_resize)(igraph_vector_int_t *, igraph_integer_t);
	igraph_integer_t (*vector_int_size)(const igraph_vector_int_t *);
} pb_igraph_api;

/* The API (loaded on the first call; never NULL). */
const pb_igraph_api *pb_igraph(void);
/* Why loading failed, or NULL when igraph is available. */
const char *pb_igraph_error(void);

#define igraph_create (pb_igraph()->create)
#define igraph_destroy (pb_igraph()->destroy)
#define igraph_edge (pb_igraph()->edge)
#define igraph_feedback_arc_set (pb_igraph()->feedback_arc_set)
#define igraph_is_dag (pb_igraph()->is_dag)
#define igraph_topological_sorting (pb_igraph()->topological_sorting)
#define igraph_vector_int_init (pb_igraph()->vector_int_init)
#define igraph_vector_int_destroy (pb_igraph()->vector_int_destroy)
#define igraph_vector_int_resize (pb_igraph()->vector_int_resize)
#define igraph_vector_int_size (pb_igraph()->vector_int_size)

#endif
