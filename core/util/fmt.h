/*
 * fmt.h — the one formatter for numbers with units: counts (SI prefixes),
 * bytes and times, used by the CLI tables, the TUI, the SVG export and the
 * plots, so that a quantity reads the same everywhere.
 *
 * A value is scaled by powers of 1000 to the unit in which its *rounded*
 * digits are below 1000 (999.5 K prints as "1.00 M", never "1000 K"), then
 * written with the digits the caller asks for:
 *   - PB_FMT_SIG3: three significant digits, "1.23 M", "12.3 M", "123 M";
 *   - 0..3: that many decimals, "12.345 ms" for 3 (aligned table columns).
 * A whole number in the base unit (a count, bytes, seconds) prints without
 * decimals: "512", "640 B", "6 s", "0 s". NaN prints "-", infinities "inf"
 * and "-inf"; a negative value keeps its sign ("-1.50 ms").
 *
 * Units: counts "", K, M, G, T, P; bytes B, KB, MB, GB, TB, PB, *decimal*
 * (1 KB = 1000 B, as the SI prefixes of the counts; 1024 B is "1.02 KB");
 * times s, ms, us, ns, ps (a time below 1 s moves down to the unit that
 * keeps it at 1 or more).
 *
 * Every function writes at most len bytes (NUL included, cut like snprintf)
 * and returns buf. Rounding is printf's ("%.*f", ties to even); the digits
 * are made without printf where the platform allows it (`info` formats three
 * numbers per node of 6k-node models).
 */
#ifndef PB_UTIL_FMT_H
#define PB_UTIL_FMT_H

#include <stddef.h>

typedef enum {
	PB_FMT_COUNT,   /* "", K, M, G, T, P */
	PB_FMT_BYTES,   /* B, KB, MB, GB, TB, PB (powers of 1000) */
	PB_FMT_SECONDS, /* ps, ns, us, ms, s */
} pb_fmt_unit;

/* `decimals`: three significant digits instead of a fixed count. */
#define PB_FMT_SIG3 (-1)
/* `flags`: no space between the number and the unit ("1.23M", narrow
 * columns). */
#define PB_FMT_TIGHT 1

/* v in `unit` with `decimals` (PB_FMT_SIG3, or 0..3; more count as 3). */
char *pb_fmt_num(double v, pb_fmt_unit unit, int decimals, int flags, char *buf, size_t len);

/* The common cases, three significant digits, a space before the unit: */
/* count: 1234567 -> "1.23 M", 512 -> "512" */
char *pb_fmt_si(double v, char *buf, size_t len);
/* bytes: 1530000 -> "1.53 MB", 640 -> "640 B" */
char *pb_fmt_bytes(double v, char *buf, size_t len);
/* seconds: 0.00123 -> "1.23 ms", 4.56e-5 -> "45.6 us", 2.1 -> "2.10 s" */
char *pb_fmt_time(double s, char *buf, size_t len);
/* seconds with three decimals, for reports whose small differences matter
 * (modelled times before/after, table columns): "1.044 ms", "8.380 us" */
char *pb_fmt_time_fixed(double s, char *buf, size_t len);

#endif
