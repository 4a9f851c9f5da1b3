/*
 * view.h — view settings of a session as a "key=value;key=value" string.
 *
 * The session keeps its view (zoom, pan offset, selection, colouring, layout
 * direction, expanded blocks, last search) in pb_session.view so that it is
 * saved and loaded with the session and changed only by commands (`view`,
 * `find`). Front ends (TUI, SVG export) read it with these helpers.
 * Values are percent-encoded for ';', '=' and '%', so any text fits.
 */
#ifndef PB_VIEW_H
#define PB_VIEW_H

#include <stddef.h>

/* Copies the decoded value of key into buf; returns 1 if present, else 0
 * (buf gets dflt, which may be NULL for ""). */
int pb_view_get(const char *view, const char *key, const char *dflt, char *buf, size_t len);
/* Integer value of key, or dflt when absent or malformed. */
long pb_view_get_int(const char *view, const char *key, long dflt);
/* Sets (value != NULL) or removes (value == NULL) key. Returns 0, or -1 when
 * the result would not fit into cap bytes (view unchanged). */
int pb_view_set(char *view, size_t cap, const char *key, const char *value);
int pb_view_set_int(char *view, size_t cap, const char *key, long value);

#endif
