/*
 * tune/tuner.h — the auto-tuner (RLTune) and its baselines on one search space.
 *
 * RL tuner: an LSTM policy (policy.h) samples mini-batches of configurations,
 * one parameter per MDP step, reward 0 until the last step and then the
 * configuration's GFLOP/s (0 when illegal or wrong). The first samples are
 * measured on the hardware; once the cost model (costmodel.h) is fitted its
 * predictions are the rewards of most samples, and only the most promising
 * unmeasured configurations of each round are measured; the model is refitted
 * as measurements accumulate. Policy updates are mini-batch REINFORCE with the
 * batch mean as baseline.
 * Baselines at the same budget: random search, simulated annealing over the
 * same cost model (AutoTVM-like), exhaustive search when the space is small;
 * OpenBLAS sgemm as the roof.
 * Every hardware measurement is appended to the log; a configuration is
 * measured at most once per run (methods that pick it again reuse the value,
 * but it still counts in their own measurement budget).
 */
#ifndef PB_TUNE_TUNER_H
#define PB_TUNE_TUNER_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"
#include "tune/blas_baseline.h"
#include "tune/measure.h"
#include "tune/space.h"

typedef struct pb_tune_opts {
	int trials; /* hardware measurements per method (default 64) */
	int batch;  /* policy samples per REINFORCE update (default 16) */
	uint64_t seed;
	int baselines;          /* also random, SA, exhaustive (small spaces), OpenBLAS */
	int64_t exhaustive_max; /* exhaustive only up to this many legal configs (5000) */
	const char *log_path;   /* append measurements here (NULL: no log) */
	int resume;             /* read earlier measurements of this shape from log_path */
	int no_costmodel;       /* RL with measured rewards only (ablation) */
	int no_transfer;        /* 1: the cost model does not start from other shapes' measurements
	                           in log_path (transfer.h; ablation) */
	pb_tune_measure_opts measure;
	int (*progress)(void *ud, double fraction, const char *line); /* non-zero: cancel */
	void *progress_ud;
	/* Whole-model tuning (tune_all.h) and ranks: */
	double time_budget; /* > 0: the RL tuner stops after this many seconds of wall
	                       time, once it has one valid measurement */
	const struct pb_tune_record *prior; /* measurements known before (like --resume) */
	int n_prior;
	/* non-NULL: each log line (no newline) goes here instead of log_path */
	int (*sink)(void *ud, const char *line, pb_error *err);
	void *sink_ud;
} pb_tune_opts;

typedef struct pb_tune_method {
	int ran;
	double best_gflops;
	int best_idx[PB_TUNE_MAX_PARAMS];
	int measurements;
	double *trace;  /* best GFLOP/s after each of the measurements */
	double seconds; /* wall time of the method */
} pb_tune_method;

typedef struct pb_tune_report {
	pb_tune_method rl, random, sa, exhaustive;
	pb_blas_baseline openblas; /* with baselines: what ran, detected and forced */
	int resumed;               /* measurements read back from the log */
	double model_accuracy;     /* 1 - mean relative error of predictions made before
	                              measuring (last 32), NAN before the first fit */
	int model_fits;
	int transfer_rows, transfer_shapes; /* cost-model rows from other shapes (transfer.h) */
	double model_fit_seconds;           /* duration of the last fit */
	int policy_updates;
	int64_t space_size, legal;
	int hw_runs; /* distinct configurations run on the hardware */
} pb_tune_report;

int pb_tune_run(const pb_tune_space *sp, const pb_tune_opts *o, pb_tune_report *r, pb_error *err);
void pb_tune_report_free(pb_tune_report *r);

/* The report of a run on sp as `tune --json` prints it; with baselines, the
 * baselines' results and every method's trace too. */
json_t *pb_tune_report_json(const pb_tune_space *sp, const pb_tune_report *r, int baselines);
/* The text report; what says where the shape came from, log_path (NULL:
 * none) where the measurements went. */
void pb_tune_report_text(FILE *f, const pb_tune_space *sp, const pb_tune_report *r, int baselines,
                         const char *what, const char *log_path);

#endif
