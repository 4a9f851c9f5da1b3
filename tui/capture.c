/*
 * capture.c — a command's output streams caught in memory (capture.h).
 *
 * While a command runs, ctx->out and ctx->log are memory streams and its
 * progress reports go to on_progress (the status line shows the latest);
 * at the end the text goes to the output pane and the command's redraw
 * flags are returned to whoever ran it, who hands them to the loop.
 */
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "output.h"
#include "util/job.h"

static int on_progress(void *ud, double fraction, const char *text)
{
	tui_app *a = ud;
	a->progress_calls++;
	if (fraction < 0)
		snprintf(a->progress, sizeof a->progress, "%s", text);
	else
		snprintf(a->progress, sizeof a->progress, "[%3.0f%%] %s", fraction * 100, text);
	/* the loop draws and reads keys between the job's slices */
	return pb_job_cancelled();
}

void tui_capture_begin(tui_app *a, tui_capture *c)
{
	pb_cmd_ctx *ctx = a->ctx;
	memset(c, 0, sizeof *c);
	c->out = open_memstream(&c->obuf, &c->olen);
	c->log = open_memstream(&c->lbuf, &c->llen);
	c->saved_out = ctx->out;
	c->saved_log = ctx->log;
	c->saved_redraw = ctx->redraw;
	if (c->out)
		ctx->out = c->out;
	if (c->log)
		ctx->log = c->log;
	ctx->redraw = 0;
	ctx->interactive = 1;
	ctx->progress = on_progress;
	ctx->progress_ud = a;
}

int tui_capture_end(tui_app *a, tui_capture *c, int rc, const pb_error *err)
{
	pb_cmd_ctx *ctx = a->ctx;
	ctx->out = c->saved_out;
	ctx->log = c->saved_log;
	int flags = ctx->redraw;
	ctx->redraw = c->saved_redraw;
	if (c->out)
		fclose(c->out);
	if (c->log)
		fclose(c->log);
	if (c->lbuf && c->lbuf[0])
		tui_out_add(a, 0, c->lbuf);
	if (c->obuf && c->obuf[0])
		tui_out_add(a, 0, c->obuf);
	free(c->obuf);
	free(c->lbuf);
	if (rc)
		tui_out(a, 1, "error: %s", err->msg[0] ? err->msg : "command failed");
	if (a->detach_note && a->s->solver_detached[0])
		tui_out(a, 0, "%s; 's' no longer steps it", a->s->solver_detached);
	a->detach_note = 0;
	return (flags & (PB_REDRAW_ALL | PB_QUIT)) | PB_REDRAW_STATUS | TUI_FIT;
}
