/*
 * tune/tune_all.h — whole-model tuning: every distinct Conv/Gemm/MatMul
 * kernel shape of a model tuned once, into one log that `--costs` reads.
 *
 * Shapes are deduplicated by their key (pb_tune_shape_key, batch excluded);
 * the nodes sharing a shape are listed in its summary line in the log
 * (log.h, "method":"shape"), written when the shape is finished. A shape with
 * a summary line is done: `--resume` skips it and continues the others from
 * their measurements already in the log. With a time budget each shape gets
 * the budget's remaining time in proportion to its share of the model's
 * kernel FLOPs (batch x FLOPs summed over its nodes); time a shape leaves
 * unused goes to the shapes after it.
 *
 * Across ranks (util/ranks.h, `mpirun -np N`): rank 0 coordinates — it hands
 * out shapes one at a time, biggest share first, to the other ranks and tunes
 * shapes itself in between; every rank measures on its own host and sends
 * each log line to rank 0 as soon as it is measured, then the summary line.
 * Rank 0 alone writes the log. A rank that stays silent (no line or
 * heartbeat) for rank_timeout seconds is taken for dead: its shape in flight
 * is reported missing (its measurements so far are in the log, and
 * `--resume` continues it) and the other ranks finish the rest.
 */
#ifndef PB_TUNE_TUNE_ALL_H
#define PB_TUNE_TUNE_ALL_H

#include <jansson.h>
#include <stdio.h>

#include "util/error.h"
#include "model/graph.h"
#include "tune/log.h"
#include "tune/tuner.h"

enum {
	PB_TUNE_ALL_TODO = 0,
	PB_TUNE_ALL_LOGGED = 1,  /* done in an earlier run (summary line in the log) */
	PB_TUNE_ALL_TUNED = 2,   /* tuned by this run */
	PB_TUNE_ALL_MISSING = -1 /* its rank died or it failed: `--resume` completes it */
};

typedef struct pb_tune_all_shape {
	pb_tune_shape shape; /* of its first node (batch 1 in the key) */
	char key[128];
	int *nodes; /* graph node ids sharing the kernel */
	int n_nodes;
	double flops; /* batch x FLOPs summed over the nodes */
	double share; /* flops / all shapes' flops */
	/* outcome */
	int state;
	int measurements;
	double best_gflops;
	double tune_seconds;
	int rank;
	char host[64];
	char why[200]; /* MISSING: why */
	/* with baselines: OpenBLAS sgemm on the shape (blas_baseline.h), 0 when not run */
	double openblas_gflops;
	char openblas_core[32];
} pb_tune_all_shape;

/* A node the run does not tune, and why (an operator without a tuned kernel,
 * or a Conv/Gemm/MatMul whose shape the kernels cannot take). */
typedef struct pb_tune_all_skip {
	int node;
	char why[200];
} pb_tune_all_skip;

typedef struct pb_tune_all {
	const pb_graph *g;
	pb_tune_all_shape *shapes; /* in graph order of their first node */
	int n;
	int untunable; /* Conv/Gemm/MatMul nodes whose shape the kernels cannot take */
	double flops;
	pb_tune_all_skip *skipped; /* every node of g in no shape, in graph order */
	int n_skipped;
} pb_tune_all;

typedef struct pb_tune_all_opts {
	pb_tune_opts tune;   /* trials, batch, seed, measure; log_path required; resume;
	                      * baselines: also OpenBLAS on every shape (no other baseline) */
	double budget;       /* > 0: seconds of wall time for the whole run */
	double rank_timeout; /* seconds of silence after which a rank is taken for dead */
	int (*progress)(void *ud, double fraction, const char *line); /* non-zero: cancel */
	void *progress_ud;
} pb_tune_all_opts;

typedef struct pb_tune_all_report {
	int ranks, dead_ranks;
	int tuned, logged, missing;
	double seconds; /* wall time of the run */
	double budget;
} pb_tune_all_report;

/* The distinct tunable kernel shapes of g. */
int pb_tune_all_plan(const pb_graph *g, pb_tune_all *out, pb_error *err);
void pb_tune_all_free(pb_tune_all *a);

/* Tunes the shapes (on this rank, or coordinated across the job's ranks).
 * Ranks other than 0 return once rank 0 has no more work for them. Missing
 * shapes are not an error here: r->missing counts them. */
int pb_tune_all_run(pb_tune_all *a, const pb_tune_all_opts *o, pb_tune_all_report *r,
                    pb_error *err);

/* Measures OpenBLAS on shape s (blas_baseline.h) into its outcome. */
void pb_tune_all_openblas(pb_tune_all *a, int s, const pb_tune_all_opts *o);

/* The report as `tune MODEL --all` prints it. */
void pb_tune_all_report_text(FILE *f, const pb_tune_all *a, const pb_tune_all_report *r,
                             const char *log_path);
json_t *pb_tune_all_report_json(const pb_tune_all *a, const pb_tune_all_report *r,
                                const char *log_path);

/* ---- internal to tune_all.c and tune_all_ranks.c ---- */
/* Tunes shape s with the given earlier measurements and time budget (0:
 * none); every log line goes to sink; *summary receives the shape's summary
 * line (malloc'd). */
int pb_tune_all_one(const pb_tune_all *a, int s, const pb_tune_all_opts *o,
                    const pb_tune_record *prior, int n_prior, double budget,
                    int (*sink)(void *ud, const char *line, pb_error *err), void *sink_ud,
                    int (*progress)(void *ud, double fraction, const char *line), void *pud,
                    char **summary, pb_error *err);
/* Takes a summary line (from the log or a rank) into shape s's outcome. */
int pb_tune_all_take_summary(pb_tune_all *a, int s, const json_t *line, int state);
/* The worker side of a run across ranks (ranks other than 0). */
int pb_tune_all_worker(pb_tune_all *a, const pb_tune_all_opts *o, pb_error *err);

#endif
