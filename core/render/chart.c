/*
 * chart.c — SVG primitives for the plots (see chart.h).
 */
#include "render/chart.h"

#include <math.h>

#include "util/fmt.h"
#include "render/xml_text.h"

void pb_svgdoc_open(FILE *f, int w, int h, const char *title, const char *subtitle)
{
	fprintf(f,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
	        "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"Helvetica,Arial,sans-serif\">\n",
	        w, h, w, h);
	fputs("<title>", f);
	pb_xml_escape(f, title);
	fputs("</title>\n", f);
	fprintf(f,
	        "<rect class=\"background\" x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
	        "fill=\"white\"/>\n",
	        w, h);
	fputs("<g class=\"title\">\n", f);
	pb_svg_text(f, 16, 24, "start", 16, "black", title);
	if (subtitle && *subtitle)
		pb_svg_text(f, 16, 42, "start", 11, "#444444", subtitle);
	fputs("</g>\n", f);
}

void pb_svgdoc_close(FILE *f)
{
	fputs("</svg>\n", f);
}

double pb_nice_range(double *lo, double *hi, int ticks)
{
	if (!isfinite(*lo) || !isfinite(*hi)) {
		*lo = 0;
		*hi = 1;
	}
	if (*hi < *lo) {
		double t = *lo;
		*lo = *hi;
		*hi = t;
	}
	if (*hi - *lo < 1e-300) {
		double pad = fabs(*lo) > 0 ? fabs(*lo) * 0.1 : 1;
		*lo -= pad;
		*hi += pad;
	}
	double raw = (*hi - *lo) / (ticks > 0 ? ticks : 5);
	double mag = pow(10, floor(log10(raw)));
	double step = mag;
	if (raw / mag > 5)
		step = 10 * mag;
	else if (raw / mag > 2)
		step = 5 * mag;
	else if (raw / mag > 1)
		step = 2 * mag;
	*lo = floor(*lo / step + 1e-9) * step;
	*hi = ceil(*hi / step - 1e-9) * step;
	if (*hi <= *lo)
		*hi = *lo + step;
	return step;
}

void pb_chart_init(pb_chart *c, FILE *f, double px, double py, double pw, double ph, double x0,
                   double x1, double y0, double y1)
{
	*c = (pb_chart){f, px, py, pw, ph, x0, x1, y0, y1};
	if (c->x1 == c->x0)
		c->x1 = c->x0 + 1;
	if (c->y1 == c->y0)
		c->y1 = c->y0 + 1;
}

double pb_chart_sx(const pb_chart *c, double x)
{
	return c->px + (x - c->x0) / (c->x1 - c->x0) * c->pw;
}

double pb_chart_sy(const pb_chart *c, double y)
{
	return c->py + c->ph - (y - c->y0) / (c->y1 - c->y0) * c->ph;
}

void pb_svg_text(FILE *f, double x, double y, const char *anchor, double size, const char *fill,
                 const char *text)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%.1f\" fill=\"%s\">",
	        x, y, anchor, size, fill);
	pb_xml_escape(f, text);
	fputs("</text>\n", f);
}

void pb_svg_text_rot(FILE *f, double x, double y, double angle, const char *anchor, double size,
                     const char *text)
{
	fprintf(f,
	        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%.1f\" "
	        "transform=\"rotate(%.0f %.1f %.1f)\">",
	        x, y, anchor, size, angle, x, y);
	pb_xml_escape(f, text);
	fputs("</text>\n", f);
}

void pb_chart_axes(const pb_chart *c, double xstep, double ystep, const char *xlabel,
                   const char *ylabel, pb_tick_fmt xfmt, pb_tick_fmt yfmt)
{
	FILE *f = c->f;
	char buf[64];
	if (!xfmt)
		xfmt = pb_fmt_si;
	if (!yfmt)
		yfmt = pb_fmt_si;
	fputs("<g class=\"axis\">\n", f);
	fprintf(f,
	        "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
	        "stroke=\"#333333\" stroke-width=\"1\"/>\n",
	        c->px, c->py, c->pw, c->ph);
	if (ystep > 0) {
		int n = (int)floor((c->y1 - c->y0) / ystep + 1e-6);
		for (int k = 0; k <= n && k <= 100; k++) {
			double v = c->y0 + k * ystep, y = pb_chart_sy(c, v);
			if (fabs(v) < ystep * 1e-9)
				v = 0;
			fprintf(f,
			        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			        "stroke=\"#dddddd\"/>\n",
			        c->px, y, c->px + c->pw, y);
			pb_svg_text(f, c->px - 5, y + 3.5, "end", 10, "#333333",
			            yfmt(v, buf, sizeof buf));
		}
	}
	if (xstep > 0) {
		int n = (int)floor((c->x1 - c->x0) / xstep + 1e-6);
		for (int k = 0; k <= n && k <= 100; k++) {
			double v = c->x0 + k * xstep, x = pb_chart_sx(c, v);
			if (fabs(v) < xstep * 1e-9)
				v = 0;
			fprintf(f,
			        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			        "stroke=\"#dddddd\"/>\n",
			        x, c->py, x, c->py + c->ph);
			pb_svg_text(f, x, c->py + c->ph + 14, "middle", 10, "#333333",
			            xfmt(v, buf, sizeof buf));
		}
	}
	if (xlabel)
		pb_svg_text(f, c->px + c->pw / 2, c->py + c->ph + 30, "middle", 11, "black",
		            xlabel);
	if (ylabel)
		pb_svg_text_rot(f, c->px - 48, c->py + c->ph / 2, -90, "middle", 11, ylabel);
	fputs("</g>\n", f);
}

void pb_chart_line(const pb_chart *c, const char *id, const double *x, const double *y, int n,
                   const char *color, double width, const char *dash)
{
	FILE *f = c->f;
	fputs("<g class=\"series\" id=\"", f);
	pb_xml_escape(f, id);
	fputs("\">\n", f);
	int open = 0;
	for (int i = 0; i < n; i++) {
		if (!isfinite(x[i]) || !isfinite(y[i])) {
			if (open)
				fputs("\"/>\n", f);
			open = 0;
			continue;
		}
		if (!open) {
			fprintf(f,
			        "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s%s%s "
			        "points=\"",
			        color, width, dash ? " stroke-dasharray=\"" : "", dash ? dash : "",
			        dash ? "\"" : "");
			open = 1;
		} else {
			fputc(' ', f);
		}
		fprintf(f, "%.1f,%.1f", pb_chart_sx(c, x[i]), pb_chart_sy(c, y[i]));
	}
	if (open)
		fputs("\"/>\n", f);
	fputs("</g>\n", f);
}

void pb_chart_points(const pb_chart *c, const char *id, const double *x, const double *y, int n,
                     const char *color, double r)
{
	FILE *f = c->f;
	fputs("<g class=\"series\" id=\"", f);
	pb_xml_escape(f, id);
	fprintf(f, "\" fill=\"%s\">\n", color);
	for (int i = 0; i < n; i++)
		if (isfinite(x[i]) && isfinite(y[i]))
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"/>\n",
			        pb_chart_sx(c, x[i]), pb_chart_sy(c, y[i]), r);
	fputs("</g>\n", f);
}

void pb_chart_rect(const pb_chart *c, const char *cls, double xa, double ya, double xb, double yb,
                   const char *fill, const char *stroke, double stroke_w, const char *tip)
{
	double x0 = pb_chart_sx(c, xa), x1 = pb_chart_sx(c, xb);
	double y0 = pb_chart_sy(c, ya), y1 = pb_chart_sy(c, yb);
	if (x1 < x0) {
		double t = x0;
		x0 = x1;
		x1 = t;
	}
	if (y1 < y0) {
		double t = y0;
		y0 = y1;
		y1 = t;
	}
	fprintf(
	    c->f,
	    "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
	    "stroke=\"%s\" stroke-width=\"%.1f\">",
	    cls, x0, y0, x1 - x0, y1 - y0, fill, stroke ? stroke : "none", stroke_w);
	if (tip) {
		fputs("<title>", c->f);
		pb_xml_escape(c->f, tip);
		fputs("</title>", c->f);
	}
	fputs("</rect>\n", c->f);
}

void pb_chart_hline(const pb_chart *c, const char *cls, double y, const char *color,
                    const char *dash, const char *label)
{
	double sy = pb_chart_sy(c, y);
	fprintf(c->f,
	        "<g class=\"%s\">\n<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
	        "stroke=\"%s\" stroke-width=\"1.5\"%s%s%s/>\n",
	        cls, c->px, sy, c->px + c->pw, sy, color, dash ? " stroke-dasharray=\"" : "",
	        dash ? dash : "", dash ? "\"" : "");
	if (label)
		pb_svg_text(c->f, c->px + c->pw - 4, sy - 4, "end", 10, color, label);
	fputs("</g>\n", c->f);
}

void pb_svg_legend(FILE *f, double x, double y, const char *const *labels,
                   const char *const *colors, int n)
{
	fputs("<g class=\"legend\">\n", f);
	for (int i = 0; i < n; i++) {
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n",
		        x, y + i * 17, colors[i]);
		pb_svg_text(f, x + 17, y + i * 17 + 10, "start", 11, "black", labels[i]);
	}
	fputs("</g>\n", f);
}
