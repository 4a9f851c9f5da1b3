/*
 * chart.h — a small SVG writer for the plots: document frame, a plot area
 * mapping data to pixels, axes with "nice" ticks, lines, bars, text and a
 * legend. Output is plain SVG 1.1 with classes on the parts (axis, series,
 * bar, legend) so tests and style sheets can find them; numbers are printed
 * with fixed precision, so the same data always gives the same bytes.
 */
#ifndef PB_CHART_H
#define PB_CHART_H

#include <stdio.h>

typedef struct pb_chart {
	FILE *f;
	double px, py, pw, ph; /* plot area in pixels (top-left, size) */
	double x0, x1, y0, y1; /* data range */
} pb_chart;

/* Formats an axis value into buf. */
typedef char *(*pb_tick_fmt)(double v, char *buf, size_t len);

/* Opens the <svg> element with a white background, the title (also the
 * document <title>) and an optional subtitle line. */
void pb_svgdoc_open(FILE *f, int w, int h, const char *title, const char *subtitle);
void pb_svgdoc_close(FILE *f);

/* Widens [*lo, *hi] to multiples of a 1/2/5 x 10^k step with about `ticks`
 * intervals; returns the step. A zero-width range becomes non-empty. */
double pb_nice_range(double *lo, double *hi, int ticks);

void pb_chart_init(pb_chart *c, FILE *f, double px, double py, double pw, double ph, double x0,
                   double x1, double y0, double y1);
double pb_chart_sx(const pb_chart *c, double x);
double pb_chart_sy(const pb_chart *c, double y);
/* Frame, grid, ticks and axis titles; xstep/ystep as from pb_nice_range
 * (0 = no ticks on that axis). fmt may be NULL (pb_fmt_si). */
void pb_chart_axes(const pb_chart *c, double xstep, double ystep, const char *xlabel,
                   const char *ylabel, pb_tick_fmt xfmt, pb_tick_fmt yfmt);
/* Polyline of n points (NaN points break the line), in a <g class="series">
 * with the given id. dash may be NULL. */
void pb_chart_line(const pb_chart *c, const char *id, const double *x, const double *y, int n,
                   const char *color, double width, const char *dash);
/* Small circles at the points. */
void pb_chart_points(const pb_chart *c, const char *id, const double *x, const double *y, int n,
                     const char *color, double r);
/* Rectangle in data coordinates with a tooltip; cls names the class. */
void pb_chart_rect(const pb_chart *c, const char *cls, double xa, double ya, double xb, double yb,
                   const char *fill, const char *stroke, double stroke_w, const char *tip);
/* Horizontal line at data y across the plot area, with a label at the right. */
void pb_chart_hline(const pb_chart *c, const char *cls, double y, const char *color,
                    const char *dash, const char *label);
void pb_svg_text(FILE *f, double x, double y, const char *anchor, double size, const char *fill,
                 const char *text);
/* Text rotated by angle degrees around (x, y). */
void pb_svg_text_rot(FILE *f, double x, double y, double angle, const char *anchor, double size,
                     const char *text);
/* Legend: a column of colour swatches with labels, starting at (x, y). */
void pb_svg_legend(FILE *f, double x, double y, const char *const *labels,
                   const char *const *colors, int n);

#endif
