/*
 * lazy_xgboost.h — libxgboost, loaded on first use (dlopen).
 *
 * Why: xgboost brings libstdc++, libgomp and dmlc into every process (~4 ms of
 * start-up) although only the auto-tuner's cost model uses it. costmodel.c
 * includes this header instead of <xgboost/c_api.h>; the macros redirect its
 * calls to function pointers resolved once from libxgboost.so.0. When the
 * library cannot be loaded, every call returns -1 and XGBGetLastError() says
 * why, which costmodel.c already turns into a pb_error.
 */
#ifndef PB_LAZY_XGBOOST_H
#define PB_LAZY_XGBOOST_H

#include <xgboost/c_api.h>

typedef struct pb_xgb_api {
	const char *(*GetLastError)(void);
	int (*RegisterLogCallback)(void (*)(const char *));
	int (*DMatrixCreateFromMat)(const float *, bst_ulong, bst_ulong, float, DMatrixHandle *);
	int (*DMatrixSetFloatInfo)(DMatrixHandle, const char *, const float *, bst_ulong);
	int (*DMatrixFree)(DMatrixHandle);
	int (*BoosterCreate)(const DMatrixHandle[], bst_ulong, BoosterHandle *);
	int (*BoosterFree)(BoosterHandle);
	int (*BoosterSetParam)(BoosterHandle, const char *, const char *);
	int (*BoosterUpdateOneIter)(BoosterHandle, int, DMatrixHandle);
	int (*BoosterPredict)(BoosterHandle, DMatrixHandle, int, unsigned, int, bst_ulong *,
	                      const float **);
} pb_xgb_api;

/* The API (loaded on the first call; never NULL). */
const pb_xgb_api *pb_xgb(void);

#define XGBGetLastError (pb_xgb()->GetLastError)
#define XGBRegisterLogCallback (pb_xgb()->RegisterLogCallback)
#define XGDMatrixCreateFromMat (pb_xgb()->DMatrixCreateFromMat)
#define XGDMatrixSetFloatInfo (pb_xgb()->DMatrixSetFloatInfo)
#define XGDMatrixFree (pb_xgb()->DMatrixFree)
#define XGBoosterCreate (pb_xgb()->BoosterCreate)
#define XGBoosterFree (pb_xgb()->BoosterFree)
#define XGBoosterSetParam (pb_xgb()->BoosterSetParam)
#define XGBoosterUpdateOneIter (pb_xgb()->BoosterUpdateOneIter)
#define XGBoosterPredict (pb_xgb()->BoosterPredict)

#endif
