/*
 * lazy_igraph.c — dlopen of libigraph on first use (see lazy_igraph.h).
 * Graphviz, igraph and GLPK run on the main thread only (DESIGN rule 8), so
 * the one-time initialisation needs no lock.
 */
#include "util/lazy_igraph.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* The real declarations are hidden by our macros; undo them here. */
#undef igraph_create
#undef igraph_destroy
#undef igraph_edge
#undef igraph_feedback_arc_set
#undef igraph_is_dag
#undef igraph_topological_sorting
#undef igraph_vector_int_init
#undef igraph_vector_int_destroy
#undef igraph_vector_int_resize
#undef igraph_vector_int_size

static igraph_error_t fail_create(igraph_t *g, const igraph_vector_int_t *e, igraph_integer_t n,
                                  igraph_bool_t d)
{
	return IGRAPH_FAILURE;
}
static void fail_destroy(igraph_t *g)
{
}
static igraph_error_t fail_edge(const igraph_t *g, igraph_integer_t e, igraph_integer_t *f,
                                igraph_integer_t *t)
{
	return IGRAPH_FAILURE;
}
static igraph_error_t fail_fas(const igraph_t *g, igraph_vector_int_t *r, const igraph_vector_t *w,
                               igraph_fas_algorithm_t a)
{
	return IGRAPH_FAILURE;
}
static igraph_error_t fail_is_dag(const igraph_t *g, igraph_bool_t *r)
{
	return IGRAPH_FAILURE;
}
static igraph_error_t fail_topo(const igraph_t *g, igraph_vector_int_t *r, igraph_neimode_t m)
{
	return IGRAPH_FAILURE;
}
static igraph_error_t fail_vinit(igraph_vector_int_t *v, igraph_integer_t n)
{
	return IGRAPH_FAILURE;
}
static void fail_vdestroy(igraph_vector_int_t *v)
{
}
static igraph_error_t fail_vresize(igraph_vector_int_t *v, igraph_integer_t n)
{
	return IGRAPH_FAILURE;
}
static igraph_integer_t fail_vsize(const igraph_vector_int_t *v)
{
	return 0;
}

static const pb_igraph_api failing = {fail_create,  fail_destroy, fail_edge,  fail_fas,
                                      fail_is_dag,  fail_topo,    fail_vinit, fail_vdestroy,
                                      fail_vresize, fail_vsize};
static pb_igraph_api api;
static const pb_igraph_api *current;
static char load_error[512];

static void *sym(void *h, const char *name, int *missing)
{
	void *p = dlsym(h, name);
	if (!p && !*missing) {
		*missing = 1;
		snprintf(load_error, sizeof load_error, "igraph: symbol %s not found in libigraph",
		         name);
	}
	return p;
}

const pb_igraph_api *pb_igraph(void)
{
	if (current)
		return current;
	current = &failing;
	void *h = dlopen("libigraph.so.3", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(load_error, sizeof load_error,
		         "igraph: cannot load libigraph.so.3 (%s); install libigraph3 (make deps)",
		         dlerror());
		return current;
	}
	int missing = 0;
	api.create = (igraph_error_t(*)(igraph_t *, const igraph_vector_int_t *, igraph_integer_t,
	                                igraph_bool_t))sym(h, "igraph_create", &missing);
	api.destroy = (void (*)(igraph_t *))sym(h, "igraph_destroy", &missing);
	api.edge = (igraph_error_t(*)(const igraph_t *, igraph_integer_t, igraph_integer_t *,
	                              igraph_integer_t *))sym(h, "igraph_edge", &missing);
	api.feedback_arc_set =
	    (igraph_error_t(*)(const igraph_t *, igraph_vector_int_t *, const igraph_vector_t *,
	                       igraph_fas_algorithm_t))sym(h, "igraph_feedback_arc_set", &missing);
	api.is_dag =
	    (igraph_error_t(*)(const igraph_t *, igraph_bool_t *))sym(h, "igraph_is_dag", &missing);
	api.topological_sorting =
	    (igraph_error_t(*)(const igraph_t *, igraph_vector_int_t *, igraph_neimode_t))sym(
	        h, "igraph_topological_sorting", &missing);
	api.vector_int_init = (igraph_error_t(*)(igraph_vector_int_t *, igraph_integer_t))sym(
	    h, "igraph_vector_int_init", &missing);
	api.vector_int_destroy =
	    (void (*)(igraph_vector_int_t *))sym(h, "igraph_vector_int_destroy", &missing);
	api.vector_int_resize = (igraph_error_t(*)(igraph_vector_int_t *, igraph_integer_t))sym(
	    h, "igraph_vector_int_resize", &missing);
	api.vector_int_size = (igraph_integer_t(*)(const igraph_vector_int_t *))sym(
	    h, "igraph_vector_int_size", &missing);
	/* Errors become return codes instead of abort(); warnings stay silent. */
	igraph_error_handler_t *(*set_err)(igraph_error_handler_t *) =
	    (igraph_error_handler_t * (*)(igraph_error_handler_t *))
	        dlsym(h, "igraph_set_error_handler");
	void *ignore = dlsym(h, "igraph_error_handler_ignore");
	igraph_warning_handler_t *(*set_warn)(igraph_warning_handler_t *) =
	    (igraph_warning_handler_t * (*)(igraph_warning_handler_t *))
	        dlsym(h, "igraph_set_warning_handler");
	void *wignore = dlsym(h, "igraph_warning_handler_ignore");
	if (missing || !set_err || !ignore) {
		if (!missing)
			snprintf(load_error, sizeof load_error,
			         "igraph: igraph_set_error_handler not found in libigraph");
		return current;
	}
	set_err((igraph_error_handler_t *)ignore);
	if (set_warn && wignore)
		set_warn((igraph_warning_handler_t *)wignore);
	current = &api;
	load_error[0] = '\0';
	return current;
}

const char *pb_igraph_error(void)
{
	pb_igraph();
	return load_error[0] ? load_error : NULL;
}
