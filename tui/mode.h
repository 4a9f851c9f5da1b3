/*
 * mode.h — the workbench's input modes (htop's ScreenManager, tmux's window
 * modes): each mode is a small constant table of handlers, kept on a stack
 * whose bottom is the normal mode.
 *
 * The loop (app.c) gives every input event to the top mode; a key handler
 * that returns TUI_PASS hands the key to the mode below (the job mode passes
 * navigation keys to the normal mode). Handlers return PB_REDRAW_* | TUI_*
 * flags; they never draw or flush themselves: the loop draws the views, then
 * each mode's line or screen (draw), and flushes once.
 */
#ifndef PB_TUI_MODE_H
#define PB_TUI_MODE_H

#include "state.h"

/* A key handler's answer: not mine, offer it to the mode below. */
enum { TUI_PASS = 1 << 14 };

struct tui_mode {
	const char *name;
	/* key: a character (code 0) or a KEY_* code (code 1) */
	int (*key)(tui_app *a, void *data, int key, int code);
	int (*mouse)(tui_app *a, void *data, const MEVENT *ev);
	int (*resize)(tui_app *a, void *data);
	/* draws the bottom row (or, full_screen, the whole screen) with
	 * wnoutrefresh; the loop flushes */
	void (*draw)(tui_app *a, void *data);
	/* work between events (a job's next slice); 1 keeps the loop polling */
	int (*idle)(tui_app *a, void *data);
	void (*close)(void *data); /* frees data when the mode leaves the stack */
	int full_screen;           /* covers the views (the pager) */
	int cursor;                /* shows the cursor (the line editor) */
};

/* Pushes a mode; data is the mode's own (freed by its close). Returns 0, or
 * -1 when the stack is full (data closed). */
int tui_mode_push(tui_app *a, const tui_mode *m, void *data);
/* Removes the topmost entry of mode m (wherever it is on the stack). */
int tui_mode_remove(tui_app *a, const tui_mode *m);
/* The top entry. */
tui_mode_entry *tui_mode_top(tui_app *a);
/* 1 when mode m is on the stack. */
int tui_mode_on(const tui_app *a, const tui_mode *m);
void tui_mode_clear(tui_app *a);

#endif
