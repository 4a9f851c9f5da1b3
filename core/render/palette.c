/*
 * palette.c — category and heat colours for the SVG export and the plots
 * (see palette.h).
 *
 * Categories: a fixed list of 12 light fills (ColorBrewer Set3), then hues
 * spaced by the golden angle so that neighbouring indices stay apart; the
 * border colour is the fill at 55 % brightness. Heat: ColorBrewer YlOrRd,
 * 7 stops, linearly interpolated. Every colour is a "#rrggbb" string.
 */
#include "render/palette.h"

#include <math.h>
#include <stdio.h>

/* Light, mutually distinct fills that keep black text readable. */
static const unsigned palette[12] = {0x8dd3c7, 0xffffb3, 0xbebada, 0xfb8072, 0x80b1d3, 0xfdb462,
                                     0xb3de69, 0xfccde5, 0xd9d9d9, 0xbc80bd, 0xccebc5, 0xffed6f};

static unsigned hsv(double h, double s, double v)
{
	double r, g, b;
	int i = (int)floor(h * 6);
	double f = h * 6 - i, p = v * (1 - s), q = v * (1 - f * s), t = v * (1 - (1 - f) * s);
	switch (((i % 6) + 6) % 6) {
	case 0:
		r = v, g = t, b = p;
		break;
	case 1:
		r = q, g = v, b = p;
		break;
	case 2:
		r = p, g = v, b = t;
		break;
	case 3:
		r = p, g = q, b = v;
		break;
	case 4:
		r = t, g = p, b = v;
		break;
	default:
		r = v, g = p, b = q;
		break;
	}
	return ((unsigned)lround(r * 255) << 16) | ((unsigned)lround(g * 255) << 8) |
	       (unsigned)lround(b * 255);
}

static unsigned colour(int i)
{
	if (i < 0)
		return 0xeeeeee;
	if (i < 12)
		return palette[i];
	double h = fmod(0.11 + (i - 12) * 0.6180339887, 1.0);
	return hsv(h, 0.40, 0.95);
}

char *pb_palette(int i, char *buf, size_t len)
{
	snprintf(buf, len, "#%06x", colour(i));
	return buf;
}

char *pb_palette_dark(int i, char *buf, size_t len)
{
	unsigned c = colour(i);
	unsigned r = (c >> 16) * 55 / 100, g = ((c >> 8) & 255) * 55 / 100,
	         b = (c & 255) * 55 / 100;
	snprintf(buf, len, "#%02x%02x%02x", r, g, b);
	return buf;
}

char *pb_heat(double t, char *buf, size_t len)
{
	/* ColorBrewer YlOrRd, 7 steps, interpolated. */
	static const unsigned stops[7] = {0xffffcc, 0xfed976, 0xfeb24c, 0xfd8d3c,
	                                  0xfc4e2a, 0xe31a1c, 0xb10026};
	if (!(t >= 0))
		t = 0;
	if (t > 1)
		t = 1;
	double x = t * 6;
	int k = (int)floor(x);
	if (k >= 6)
		k = 5;
	double f = x - k;
	unsigned a = stops[k], b = stops[k + 1], out = 0;
	for (int sh = 16; sh >= 0; sh -= 8) {
		double ca = (a >> sh) & 255, cb = (b >> sh) & 255;
		out |= (unsigned)lround(ca + (cb - ca) * f) << sh;
	}
	snprintf(buf, len, "#%06x", out);
	return buf;
}
