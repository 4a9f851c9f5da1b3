/*
 * lazy_openblas.c — dlopen of libopenblas on first use (see lazy_openblas.h).
 * Only the tuner calls it, on the main thread, so the one-time set-up needs
 * no lock. The library stays loaded until exit.
 *
 * It is opened in a link-map namespace of its own (dlmopen LM_ID_NEWLM): a
 * fresh copy whose constructor reads OPENBLAS_CORETYPE now. Another library
 * may have loaded OpenBLAS into the process already (igraph's LAPACK, in a
 * build that links igraph, or once a model was loaded): dlopen would return
 * that copy, its kernels chosen when the process started. Plain dlopen is
 * the fallback when a namespace cannot be made.
 */
#ifdef PB_HAVE_OPENBLAS
#include "util/lazy_openblas.h"

#include <dlfcn.h>
#include <stddef.h>

const pb_openblas_api *pb_openblas(void)
{
	static pb_openblas_api api;
	static int tried;
	if (tried)
		return api.sgemm ? &api : NULL;
	tried = 1;
	void *h = dlmopen(LM_ID_NEWLM, "libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
#ifdef PB_OPENBLAS_LIB
	if (!h)
		h = dlmopen(LM_ID_NEWLM, PB_OPENBLAS_LIB, RTLD_NOW | RTLD_LOCAL);
#endif
	if (!h)
		h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
#ifdef PB_OPENBLAS_LIB
	if (!h)
		h = dlopen(PB_OPENBLAS_LIB, RTLD_NOW | RTLD_LOCAL);
#endif
	if (!h)
		return NULL;
	/* POSIX: dlsym's object pointer converts to the function's type. */
	void *s = dlsym(h, "cblas_sgemm"), *t = dlsym(h, "openblas_set_num_threads"),
	     *c = dlsym(h, "openblas_get_corename");
	if (!s || !t || !c)
		return NULL;
	api.sgemm = (__typeof__(api.sgemm))s;
	api.set_num_threads = (__typeof__(api.set_num_threads))t;
	api.get_corename = (__typeof__(api.get_corename))c;
	return &api;
}
#else
/* Built without OpenBLAS: this file is empty (ISO C wants one declaration). */
typedef int pb_lazy_openblas_unused;
#endif
