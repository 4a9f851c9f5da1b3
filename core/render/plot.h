/*
 * plot.h — SVG charts for people who would rather look than read.
 *
 *   training  RL training curve: reward and gap to the optimum per episode,
 *             from a training log (JSON lines).
 *   tune      auto-tuner progress: GFLOP/s of each trial and the best so far,
 *             per task, from a tuning log (JSON lines).
 *   load      per-group load bars: time (compute + routing) and storage
 *             against the memory limit, from a plan.
 *   timeline  pipeline schedule (1F1B): one row per stage, one box per
 *             forward/backward micro-batch, from plan detail.schedule; when a
 *             pipeline plan has no schedule, a 1F1B schedule is synthesized
 *             from the stage times (and marked so in the title).
 * The input fields are documented in docs/export.md. Every function returns
 * PB_EINPUT with the file (and line) named when the input lacks them.
 */
#ifndef PB_PLOT_H
#define PB_PLOT_H

#include <stddef.h>

#include <jansson.h>

#include "util/error.h"
#include "plan.h"

enum { PB_PLOT_TRAINING, PB_PLOT_TUNE, PB_PLOT_LOAD, PB_PLOT_TIMELINE };

typedef struct pb_plot_opts {
	const char *title;    /* NULL: a default naming the input */
	double mem_limit;     /* bytes; NaN or 0: from the plan (metric memory_limit) */
	int width;            /* pixels; 0 = 900 */
	const char *schedule; /* timeline: which named schedule (NULL: 1f1b, else the first) */
} pb_plot_opts;

int pb_plot_kind_parse(const char *s, int *kind, pb_error *err);

/* Reads a JSON-lines file (one object per line; blank lines and lines
 * starting with '#' skipped) or a file holding one JSON array of objects.
 * Returns a new array. Errors name the file and line. */
int pb_jsonl_load(const char *path, json_t **out, pb_error *err);

/* Renders a chart. For TRAINING and TUNE, src is the log path (read here);
 * for LOAD and TIMELINE, plan is used and src only names it in messages. */
int pb_plot_render(int kind, const char *src, const pb_plan *plan, const pb_plot_opts *o,
                   char **svg, size_t *len, pb_error *err);
int pb_plot_write(const char *path, const char *svg, size_t len, pb_error *err);

/* The individual charts (records: an array of log objects). */
int pb_plot_training(const json_t *records, const char *src, const pb_plot_opts *o, FILE *f,
                     pb_error *err);
int pb_plot_tune(const json_t *records, const char *src, const pb_plot_opts *o, FILE *f,
                 pb_error *err);
int pb_plot_load(const pb_plan *p, const char *src, const pb_plot_opts *o, FILE *f, pb_error *err);
int pb_plot_timeline(const pb_plan *p, const char *src, const pb_plot_opts *o, FILE *f,
                     pb_error *err);

/* 1F1B schedule for n_stages stages and n_mb micro-batches with per-stage
 * forward and backward times: a JSON array of {stage, mb, kind "F"|"B",
 * start, end}, each stage running its ops in 1F1B order (warm-up of
 * n_stages-1-s forwards, then one forward / one backward, then the remaining
 * backwards), each op starting when both its stage is free and its input is
 * ready (F: same mb on the previous stage; B: same mb on the next stage, or
 * its own F on the last stage). */
json_t *pb_schedule_1f1b(int n_stages, int n_mb, const double *fwd, const double *bwd);

#endif
