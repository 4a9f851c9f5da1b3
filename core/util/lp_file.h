/*
 * lp_file.h — a GLPK problem written in CPLEX LP format (glp_write_lp)
 * through util/atomic_file.h: to a fresh temporary beside the target, fsynced,
 * renamed over it. The partition and shard MILPs' --emit-lp use it, so a kill
 * mid-write leaves the previous LP file whole and a link planted at a
 * temporary's name is never followed.
 */
#ifndef PB_UTIL_LP_FILE_H
#define PB_UTIL_LP_FILE_H

#include <glpk.h>

#include "util/error.h"

/* Writes P to path; on failure path is untouched and err says why. */
int pb_lp_write_atomic(glp_prob *P, const char *path, pb_error *err);

#endif
