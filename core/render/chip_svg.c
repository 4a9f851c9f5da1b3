/*
 * chip_svg.c — the floorplan SVG of a placed plan (chip_svg.h). Reads only
 * detail.mesh (grid, placement, links, io) and the plan's groups; cells are
 * CELL px squares GAP px apart, a link is an arrow in the gap between its
 * cells, shifted to one side by its direction so the two directions of a
 * pair do not overlap. Heat and stroke width scale with load / max load.
 */
#include "render/chip_svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/palette.h"
#include "render/xml_text.h"
#include "util/atomic_file.h"

enum { CELL = 64, GAP = 28, X0 = 40, Y0 = 70 };

static double cell_x(int c)
{
	return X0 + c * (CELL + GAP);
}
static double cell_y(int r)
{
	return Y0 + r * (CELL + GAP);
}

static int rc_of(const json_t *pair, int *r, int *c)
{
	if (!json_is_array(pair) || json_array_size(pair) != 2)
		return 0;
	*r = (int)json_integer_value(json_array_get(pair, 0));
	*c = (int)json_integer_value(json_array_get(pair, 1));
	return 1;
}

static void link_arrow(FILE *f, int r0, int c0, int r1, int c1, double bytes, double time,
                       double max)
{
	double t = max > 0 ? bytes / max : 0;
	char heat[16];
	pb_heat(t, heat, sizeof heat);
	double cx0 = cell_x(c0) + CELL / 2.0, cy0 = cell_y(r0) + CELL / 2.0;
	double cx1 = cell_x(c1) + CELL / 2.0, cy1 = cell_y(r1) + CELL / 2.0;
	double x0, y0, x1, y1, off = 12;
	if (r0 == r1) { /* east or west: in the gap between the columns */
		int dir = c1 > c0 ? 1 : -1;
		x0 = cx0 + dir * (CELL / 2.0 - 2);
		x1 = cx1 - dir * (CELL / 2.0 - 2);
		y0 = y1 = cy0 + (dir > 0 ? -off : off);
	} else {
		int dir = r1 > r0 ? 1 : -1;
		y0 = cy0 + dir * (CELL / 2.0 - 2);
		y1 = cy1 - dir * (CELL / 2.0 - 2);
		x0 = x1 = cx0 + (dir > 0 ? off : -off);
	}
	fprintf(f,
	        "<line class=\"link\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
	        "stroke=\"%s\" stroke-width=\"%.1f\" marker-end=\"url(#arrow)\">"
	        "<title>(%d,%d)-&gt;(%d,%d): %.3f MB, %.3f us</title></line>\n",
	        x0, y0, x1, y1, heat, 2 + 5 * t, r0, c0, r1, c1, bytes / 1e6, time * 1e6);
}

static int write_doc(FILE *f, const pb_plan *plan, const char *title, pb_chip_svg_stats *st)
{
	const json_t *m = json_object_get(plan->detail, "mesh");
	int rows = (int)json_integer_value(json_object_get(m, "rows"));
	int cols = (int)json_integer_value(json_object_get(m, "cols"));
	const json_t *pl = json_object_get(m, "placement"), *links = json_object_get(m, "links");
	int io_r = 0, io_c = 0;
	rc_of(json_object_get(m, "io"), &io_r, &io_c);
	st->rows = rows;
	st->cols = cols;
	double max = 0;
	size_t i;
	const json_t *l;
	json_array_foreach(links, i, l) max =
	    fmax(max, json_real_value(json_object_get(l, "bytes")));
	st->max_load = max;
	int n_groups = 0;
	for (int c = 0; c < rows * cols; c++)
		n_groups =
		    (int)fmax(n_groups, json_integer_value(json_array_get(pl, (size_t)c)) + 1);
	double gw = cols * (CELL + GAP) - GAP, gh = rows * (CELL + GAP) - GAP;
	double lx = X0 + gw + 60; /* legends */
	double W = lx + 320, H = fmax(Y0 + gh + 60, Y0 + 150 + 18.0 * n_groups + 40);
	fprintf(f,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
	        "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
	        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
	        "markerUnits=\"userSpaceOnUse\" markerWidth=\"12\" markerHeight=\"12\" "
	        "orient=\"auto-start-reverse\">"
	        "<path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#444\"/></marker>\n"
	        "<linearGradient id=\"heat\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">\n",
	        W, H, W, H);
	for (int k = 0; k <= 10; k++) {
		char c[16];
		fprintf(f, "<stop offset=\"%.1f\" stop-color=\"%s\"/>\n", k / 10.0,
		        pb_heat(k / 10.0, c, sizeof c));
	}
	fprintf(f,
	        "</linearGradient></defs>\n<rect width=\"100%%\" height=\"100%%\" "
	        "fill=\"white\"/>\n<text x=\"%d\" y=\"24\" font-size=\"16\" "
	        "font-weight=\"bold\">",
	        X0);
	pb_xml_escape(f, title ? title : "floorplan");
	double mt = pb_plan_metric(plan, "max_time", NAN);
	fprintf(f,
	        "</text>\n<text x=\"%d\" y=\"44\">%dx%d mesh, %s routing; placed max(t) = %.6f "
	        "ms</text>\n",
	        X0, rows, cols, json_string_value(json_object_get(m, "routing")), mt * 1e3);
	/* cells */
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < cols; c++) {
			int grp =
			    (int)json_integer_value(json_array_get(pl, (size_t)(r * cols + c)));
			char fill[16], line[16];
			fprintf(
			    f,
			    "<rect class=\"core\" data-row=\"%d\" data-col=\"%d\" "
			    "data-group=\"%d\" x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%d\" "
			    "rx=\"4\" fill=\"%s\" stroke=\"%s\" stroke-width=\"1.5\">"
			    "<title>core (%d,%d): group %d</title></rect>\n",
			    r, c, grp, cell_x(c), cell_y(r), CELL, CELL,
			    pb_palette(grp, fill, sizeof fill),
			    pb_palette_dark(grp, line, sizeof line), r, c, grp);
			fprintf(
			    f,
			    "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" "
			    "font-weight=\"bold\">g%d</text>\n<text x=\"%.0f\" y=\"%.0f\" "
			    "text-anchor=\"middle\" font-size=\"9\" fill=\"#555\">%d,%d</text>\n",
			    cell_x(c) + CELL / 2.0, cell_y(r) + CELL / 2.0, grp,
			    cell_x(c) + CELL / 2.0, cell_y(r) + CELL - 6, r, c);
			st->cells++;
		}
	/* the I/O corner */
	fprintf(
	    f,
	    "<rect class=\"io\" x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%d\" rx=\"6\" "
	    "fill=\"none\" stroke=\"black\" stroke-width=\"3\" stroke-dasharray=\"6 3\"/>\n"
	    "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" font-weight=\"bold\">I/O</text>\n",
	    cell_x(io_c) - 5, cell_y(io_r) - 5, CELL + 10, CELL + 10, cell_x(io_c) + CELL / 2.0,
	    io_r == 0 ? cell_y(io_r) - 10 : cell_y(io_r) + CELL + 20);
	json_array_foreach(links, i, l)
	{
		int r0, c0, r1, c1;
		if (!rc_of(json_object_get(l, "from"), &r0, &c0) ||
		    !rc_of(json_object_get(l, "to"), &r1, &c1))
			continue;
		link_arrow(f, r0, c0, r1, c1, json_real_value(json_object_get(l, "bytes")),
		           json_real_value(json_object_get(l, "time")), max);
		st->links++;
	}
	/* legends: link load heat in MB, then the groups */
	fprintf(f,
	        "<text x=\"%.0f\" y=\"%d\" font-weight=\"bold\">link load (MB = 1e6 bytes per "
	        "step)</text>\n<rect x=\"%.0f\" y=\"%d\" width=\"240\" height=\"14\" "
	        "fill=\"url(#heat)\" stroke=\"#888\"/>\n",
	        lx, Y0, lx, Y0 + 8);
	for (int k = 0; k <= 4; k++)
		fprintf(f,
		        "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\" "
		        "font-size=\"10\">%.3g</text>\n",
		        lx + 60.0 * k, Y0 + 36, max / 1e6 * k / 4);
	fprintf(f, "<text x=\"%.0f\" y=\"%d\" font-weight=\"bold\">groups</text>\n", lx, Y0 + 70);
	for (int q = 0; q < plan->n_groups; q++) {
		char fill[16];
		double y = Y0 + 82 + 18.0 * q;
		int k = 0;
		for (int c = 0; c < rows * cols; c++)
			k += json_integer_value(json_array_get(pl, (size_t)c)) == q;
		fprintf(f,
		        "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\" "
		        "stroke=\"#555\"/><text x=\"%.0f\" y=\"%.0f\">group %d: %d cores, t = "
		        "%.6f ms%s</text>\n",
		        lx, y, pb_palette(q, fill, sizeof fill), lx + 18, y + 10, q, k,
		        plan->groups[q].time * 1e3, plan->groups[q].bottleneck ? " (max)" : "");
	}
	fputs("</svg>\n", f);
	return ferror(f) ? -1 : 0;
}

int pb_chip_svg_check(const pb_plan *plan, pb_error *err)
{
	const json_t *m = plan ? json_object_get(plan->detail, "mesh") : NULL;
	const json_t *pl = json_object_get(m, "placement");
	int rows = (int)json_integer_value(json_object_get(m, "rows"));
	int cols = (int)json_integer_value(json_object_get(m, "cols"));
	if (!json_is_array(pl) || rows < 1 || cols < 1 ||
	    (long)json_array_size(pl) != (long)rows * cols)
		return pb_err(err, PB_EINPUT,
		              "export --chip: the plan has no placement (a partition plan on a "
		              "layout with a routed mesh has one: partition --layout "
		              "layouts/manycore-16-mesh.lua)");
	for (int c = 0; c < rows * cols; c++) {
		json_int_t q = json_integer_value(json_array_get(pl, (size_t)c));
		if (q < 0 || q >= plan->n_groups)
			return pb_err(
			    err, PB_EINPUT,
			    "export --chip: detail.mesh.placement[%d] = %lld is not a group "
			    "(0..%d)",
			    c, (long long)q, plan->n_groups - 1);
	}
	return PB_OK;
}

int pb_chip_svg_write(const pb_plan *plan, const char *title, const char *path,
                      pb_chip_svg_stats *st, pb_error *err)
{
	memset(st, 0, sizeof *st);
	int rc = pb_chip_svg_check(plan, err);
	if (rc)
		return rc;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return pb_err(err, PB_ENOMEM, "export --chip: out of memory");
	int bad = write_doc(f, plan, title, st);
	if (fclose(f) || bad) {
		free(buf);
		return pb_err(err, PB_ENOMEM, "export --chip: out of memory");
	}
	rc = pb_write_file_atomic(path, buf, len, err);
	free(buf);
	return rc;
}
