/*
 * capture.h — the output of one command run, caught for the output pane.
 */
#ifndef PB_TUI_CAPTURE_H
#define PB_TUI_CAPTURE_H

#include "state.h"

/* Output capture of one command run: its streams replace ctx->out and
 * ctx->log from begin to end; runs nest (a navigation command while a job
 * is suspended) and end in the reverse order. */
typedef struct tui_capture {
	FILE *out, *log, *saved_out, *saved_log;
	char *obuf, *lbuf;
	size_t olen, llen;
	int saved_redraw;
} tui_capture;

void tui_capture_begin(tui_app *a, tui_capture *c);
/* Restores the streams, adds the output and the error (rc != 0) to the
 * output pane; returns the command's redraw flags (PB_REDRAW_* | PB_QUIT)
 * with TUI_FIT: the loop applies them. */
int tui_capture_end(tui_app *a, tui_capture *c, int rc, const pb_error *err);

#endif
