/*
 * gv.h — the process's Graphviz context and the routing of Graphviz messages.
 *
 * Graphviz is used from the main thread only (DESIGN.md rule 8). One GVC_t is
 * created lazily and shared by the SVG export and the TUI's layout. It loads
 * only the "core" (renderers: svg, dot, json ...) and "dot_layout" plugins,
 * found next to libgvc, with demand loading off: no pango text layout, so
 * label widths come from Graphviz's built-in font metrics. That makes layouts
 * identical on every machine whatever fonts are installed (golden files) and
 * is faster on big graphs. When those plugins cannot be found the normal
 * context (all configured plugins) is used instead.
 *
 * Object ids: cgraph's default id discipline uses the address of the
 * interned name as a named object's id, and subgraphs are kept in id order,
 * so cluster order (and with it the layout) would change from run to run.
 * pb_gv_open() gives graphs an id discipline that numbers names in creation
 * order instead: the same build gives the same drawing.
 *
 * Messages: cgraph's error hook (agseterrf) is installed with the threshold at
 * AGWARN, so no Graphviz warning or error ever reaches the terminal; the text
 * is collected in a buffer that pb_gv_fail() copies into a pb_error.
 */
#ifndef PB_GV_H
#define PB_GV_H

#include <gvc.h>

#include "util/error.h"

/* The shared context (created on first use), or NULL if Graphviz cannot start
 * (err filled). Main thread only. */
GVC_t *pb_gv_context(pb_error *err);
/* Frees the shared context (tests, end of program); safe to call twice. */
void pb_gv_shutdown(void);
/* Opens a directed root graph with the deterministic id discipline. */
Agraph_t *pb_gv_open(const char *name);
/* Clears the collected Graphviz messages (call before a layout/render). */
void pb_gv_messages_clear(void);
/* Messages collected since the last clear ("" if none). */
const char *pb_gv_messages(void);
/* Fills err with "what: Graphviz failed: <collected messages>" and returns
 * PB_EINTERNAL. */
int pb_gv_fail(pb_error *err, const char *what);
/* 1 when the deterministic plugin set (no pango) is in use. */
int pb_gv_deterministic(void);

#endif
