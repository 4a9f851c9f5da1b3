/*
 * fmt.c — formatting helpers for the renderers (see fmt.h).
 */
#include "util/fmt.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *pb_fmt_si(double v, char *buf, size_t len)
{
	static const char *unit[] = {"", " K", " M", " G", " T", " P"};
	if (!isfinite(v)) {
		snprintf(buf, len, "-");
		return buf;
	}
	int k = 0;
	double a = fabs(v);
	while (a >= 999.5 && k < 5) {
		a /= 1000;
		v /= 1000;
		k++;
	}
	if (k == 0 && a == floor(a))
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len,
		         a >= 99.95   ? "%.0f%s"
		         : a >= 9.995 ? "%.1f%s"
		                      : "%.2f%s",
		         v, unit[k]);
	return buf;
}

char *pb_fmt_bytes(double v, char *buf, size_t len)
{
	char n[32];
	pb_fmt_si(v, n, sizeof n);
	snprintf(buf, len, "%s%sB", n, strchr(n, ' ') ? "" : " ");
	return buf;
}

char *pb_fmt_time(double s, char *buf, size_t len)
{
	double a = fabs(s);
	if (!isfinite(s))
		snprintf(buf, len, "-");
	else if (a == 0)
		snprintf(buf, len, "0 s");
	else if (a < 1e-6)
		snprintf(buf, len, "%.3g ns", s * 1e9);
	else if (a < 1e-3)
		snprintf(buf, len, "%.3g us", s * 1e6);
	else if (a < 1)
		snprintf(buf, len, "%.3g ms", s * 1e3);
	else
		snprintf(buf, len, "%.3g s", s);
	return buf;
}

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

int pb_utf8_len(const unsigned char *p)
{
	int n = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 : (*p >> 3) == 30 ? 4 : 0;
	for (int k = 1; k < n; k++)
		if ((p[k] & 0xc0) != 0x80)
			return 0;
	return n;
}

void pb_xml_escape(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	while (*p) {
		int n = pb_utf8_len(p);
		if (n == 0) {
			fputc('?', f);
			p++;
			continue;
		}
		switch (*p) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			/* Control characters are not allowed in XML 1.0. */
			if (*p < 0x20 && *p != '\n' && *p != '\t')
				fputc(' ', f);
			else
				fwrite(p, 1, (size_t)n, f);
		}
		p += n;
	}
}
