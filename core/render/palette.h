/*
 * palette.h — colours for the SVG export and the plots: distinct fills per
 * category (group, stage, backend, method) and a sequential heat scale.
 */
#ifndef PB_RENDER_PALETTE_H
#define PB_RENDER_PALETTE_H

#include <stddef.h>

/* Distinct light colour for category i (a fixed list of 12, then golden-angle
 * hues), as "#rrggbb"; i < 0 gives a neutral grey. */
char *pb_palette(int i, char *buf, size_t len);
/* Darker border colour matching pb_palette(i). */
char *pb_palette_dark(int i, char *buf, size_t len);
/* Sequential heat colour for t in [0,1] (light yellow .. dark red). */
char *pb_heat(double t, char *buf, size_t len);

#endif
