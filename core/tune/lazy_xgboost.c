/*
 * lazy_xgboost.c — dlopen of libxgboost on first use (see lazy_xgboost.h).
 */
#include "tune/lazy_xgboost.h"

#include <dlfcn.h>
#include <stdio.h>

static char load_error[512];

static const char *fail_last_error(void)
{
	return load_error;
}
static int fail_log(void (*cb)(const char *))
{
	return -1;
}
static int fail_dm_create(const float *d, bst_ulong r, bst_ulong c, float m, DMatrixHandle *o)
{
	return -1;
}
static int fail_dm_info(DMatrixHandle h, const char *f, const float *a, bst_ulong n)
{
	return -1;
}
static int fail_handle(void *h)
{
	return -1;
}
static int fail_create(const DMatrixHandle d[], bst_ulong n, BoosterHandle *o)
{
	return -1;
}
static int fail_param(BoosterHandle h, const char *k, const char *v)
{
	return -1;
}
static int fail_iter(BoosterHandle h, int it, DMatrixHandle d)
{
	return -1;
}
static int fail_predict(BoosterHandle h, DMatrixHandle d, int m, unsigned t, int tr, bst_ulong *n,
                        const float **r)
{
	return -1;
}

static const pb_xgb_api failing = {fail_last_error, fail_log,    fail_dm_create, fail_dm_info,
                                   fail_handle,     fail_create, fail_handle,    fail_param,
                                   fail_iter,       fail_predict};
static pb_xgb_api api;
static const pb_xgb_api *current;

const pb_xgb_api *pb_xgb(void)
{
	if (current)
		return current;
	current = &failing;
	void *h = dlopen("libxgboost.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(load_error, sizeof load_error,
		         "cannot load libxgboost.so.0 (%s); install libxgboost0 (make deps)",
		         dlerror());
		return current;
	}
	const char *names[] = {"XGBGetLastError",        "XGBRegisterLogCallback",
	                       "XGDMatrixCreateFromMat", "XGDMatrixSetFloatInfo",
	                       "XGDMatrixFree",          "XGBoosterCreate",
	                       "XGBoosterFree",          "XGBoosterSetParam",
	                       "XGBoosterUpdateOneIter", "XGBoosterPredict"};
	void *p[10];
	for (int i = 0; i < 10; i++) {
		p[i] = dlsym(h, names[i]);
		if (!p[i]) {
			snprintf(load_error, sizeof load_error,
			         "symbol %s not found in libxgboost.so.0", names[i]);
			return current;
		}
	}
	/* Object and function pointers share a representation on every platform
	 * with dlsym (POSIX requires it); the casts go through the typed fields. */
	api.GetLastError = (const char *(*)(void))p[0];
	api.RegisterLogCallback = (int (*)(void (*)(const char *)))p[1];
	api.DMatrixCreateFromMat =
	    (int (*)(const float *, bst_ulong, bst_ulong, float, DMatrixHandle *))p[2];
	api.DMatrixSetFloatInfo =
	    (int (*)(DMatrixHandle, const char *, const float *, bst_ulong))p[3];
	api.DMatrixFree = (int (*)(DMatrixHandle))p[4];
	api.BoosterCreate = (int (*)(const DMatrixHandle[], bst_ulong, BoosterHandle *))p[5];
	api.BoosterFree = (int (*)(BoosterHandle))p[6];
	api.BoosterSetParam = (int (*)(BoosterHandle, const char *, const char *))p[7];
	api.BoosterUpdateOneIter = (int (*)(BoosterHandle, int, DMatrixHandle))p[8];
	api.BoosterPredict = (int (*)(BoosterHandle, DMatrixHandle, int, unsigned, int, bst_ulong *,
	                              const float **))p[9];
	current = &api;
	return current;
}
