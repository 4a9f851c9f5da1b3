/*
 * tune/layout_calibrate.h — fits a many-core layout's compute rate to the
 * per-node times of an ONNX Runtime profile (`layout --calibrate PROFILE`)
 * and says how far the layout's time model is from the measurement, per
 * operator type.
 *
 * The many-core model prices a node at MACs / mac_rate (docs/partition.md):
 * operators without MACs (Relu, MaxPool, Add, Concat, ...) cost nothing. The
 * fit is least squares through the origin over the measured nodes with MACs,
 * t_i = MACs_i x s, s = sum(MACs_i t_i) / sum(MACs_i^2), fitted mac_rate =
 * 1 / s; R^2 says how much of the variation of those times MACs explain.
 */
#ifndef PB_TUNE_LAYOUT_CALIBRATE_H
#define PB_TUNE_LAYOUT_CALIBRATE_H

#include <stdio.h>

#include <jansson.h>

#include "hw.h"
#include "model/graph.h"

typedef struct pb_calib_op {
	char op[48];
	int n;            /* measured nodes of this type */
	double macs;      /* their MACs */
	double measured;  /* their measured time per run (s) */
	double predicted; /* MACs / the layout's mac_rate */
	double fitted;    /* MACs / the fitted mac_rate */
} pb_calib_op;

typedef struct pb_calib_report {
	const char *profile, *layout, *model;
	double rate;                        /* the layout's mac_rate */
	double rate_fit;                    /* fitted (0 when no measured node has MACs) */
	double r2;                          /* of the fit over nodes with MACs */
	int n_measured;                     /* nodes with a measured time */
	int n_mac_nodes;                    /* of which with MACs */
	double measured, predicted, fitted; /* totals over measured nodes (s) */
	pb_calib_op *ops;                   /* by measured time, largest first */
	int n_ops;
} pb_calib_report;

int pb_layout_calibrate(const pb_graph *g, const pb_hw *hw, const char *profile, pb_calib_report *r,
                        pb_error *err);
void pb_calib_report_free(pb_calib_report *r);
json_t *pb_calib_report_json(const pb_calib_report *r);
void pb_calib_report_print(const pb_calib_report *r, FILE *out);

#endif
