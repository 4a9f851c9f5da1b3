/*
 * view.h — the view of a session: a typed struct (pb_view) and its saved
 * form, a "key=value;key=value" string.
 *
 * The session keeps its view (zoom, pan offset, selection, colouring, layout
 * direction, expanded blocks, last search, one-shot requests to the front
 * end) in pb_session.view so that it is saved and loaded with the session and
 * changed only by commands (`view`, `find`). Front ends (TUI, SVG export)
 * read its fields. The saved form lists the keys whose value is not the
 * default; values are percent-encoded for ';', '=' and '%', so any text fits
 * (pb_view_get / pb_view_set work on that string).
 */
#ifndef PB_VIEW_H
#define PB_VIEW_H

#include <stddef.h>

#include "util/error.h"

enum { PB_VIEW_OPEN_MAX = 32, PB_VIEW_FIND_MAX = 256 };

typedef enum { PB_VIEW_BY_GROUP, PB_VIEW_BY_OP, PB_VIEW_BY_BRANCH, PB_VIEW_BY_NONE } pb_view_color;

typedef struct pb_view {
	int zoom;            /* 0 labelled boxes, 1 compact boxes, 2 one cell per node */
	long x, y;           /* world cell at the canvas's top-left */
	long sel;            /* selected node id, -1 before any selection */
	pb_view_color color; /* what sets the boxes' colour */
	int lr;              /* 1: layout left to right, 0: top down */
	int depth;           /* collapse depth, -1 automatic */
	int n_open;          /* expanded node ranges (view expand FIRST LAST) */
	long open_first[PB_VIEW_OPEN_MAX], open_last[PB_VIEW_OPEN_MAX];
	char find[PB_VIEW_FIND_MAX]; /* the last search */
	int follow;                  /* 1: the canvas follows the selection */
	int mouse;                   /* 1: the front end takes the mouse */
	int constants;               /* 1: boxes of constants only are drawn */
	int chip;                    /* 1: the chip view of a placed plan is shown */
	int fit, center, top;        /* one-shot requests to the front end's camera */
} pb_view;

/* The defaults: zoom 0, top down, colour by group, nothing selected,
 * automatic depth, follow and mouse on. */
void pb_view_init(pb_view *v);
/* Sets one key of the saved form from its text (NULL: the default); the
 * keys are zoom x y sel color dir depth open find follow mouse constants fit
 * center top chip. An unknown key or a bad value is refused naming both. */
int pb_view_set_key(pb_view *v, const char *key, const char *value, pb_error *err);
/* Reads the saved form into v (from the defaults); keys it does not know
 * (a newer or hand-written session) and bad values are skipped. */
void pb_view_parse(pb_view *v, const char *text);
/* Writes the saved form: the keys whose value is not the default. Returns 0,
 * or -1 when it would not fit into len bytes (cut). */
int pb_view_format(const pb_view *v, char *buf, size_t len);
const char *pb_view_color_name(pb_view_color c);

/* The saved form's codec. Copies the decoded value of key into buf; returns 1
 * if present, else 0 (buf gets dflt, which may be NULL for ""). */
int pb_view_get(const char *view, const char *key, const char *dflt, char *buf, size_t len);
/* Integer value of key, or dflt when absent or malformed. */
long pb_view_get_int(const char *view, const char *key, long dflt);
/* Sets (value != NULL) or removes (value == NULL) key. Returns 0, or -1 when
 * the result would not fit into cap bytes (view unchanged). */
int pb_view_set(char *view, size_t cap, const char *key, const char *value);
int pb_view_set_int(char *view, size_t cap, const char *key, long value);

#endif
