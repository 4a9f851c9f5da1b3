/*
 * fmt.h — number formatting, colours and XML escaping shared by the SVG
 * export and the plots.
 */
#ifndef PB_RENDER_FMT_H
#define PB_RENDER_FMT_H

#include <stddef.h>
#include <stdio.h>

#include "util/atomic_file.h"
#include "util/error.h"

/* SI-scaled number: 1234567 -> "1.23 M", 512 -> "512". */
char *pb_fmt_si(double v, char *buf, size_t len);
/* Bytes with decimal units: "1.53 MB", "640 B". */
char *pb_fmt_bytes(double v, char *buf, size_t len);
/* Seconds as "1.23 ms", "45.6 us", "2.10 s"; "-" for NaN. */
char *pb_fmt_time(double s, char *buf, size_t len);
/* Distinct light colour for category i (a fixed list of 12, then golden-angle
 * hues), as "#rrggbb". */
char *pb_palette(int i, char *buf, size_t len);
/* Darker border colour matching pb_palette(i). */
char *pb_palette_dark(int i, char *buf, size_t len);
/* Sequential heat colour for t in [0,1] (light yellow .. dark red). */
char *pb_heat(double t, char *buf, size_t len);
/* Length (1-4) of the valid UTF-8 sequence at p, 0 if the bytes there are
 * not one (p points at a non-NUL byte). */
int pb_utf8_len(const unsigned char *p);
/* Writes s with & < > " ' escaped for XML text and attributes; invalid UTF-8
 * bytes become '?' and control characters other than \n and \t a space, so
 * any model name gives well-formed XML. */
void pb_xml_escape(FILE *f, const char *s);

#endif
