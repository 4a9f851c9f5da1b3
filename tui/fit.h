/*
 * fit.h — the camera: which part of the laid-out graph the canvas shows.
 */
#ifndef PB_TUI_FIT_H
#define PB_TUI_FIT_H

#include "state.h"

/* Applies the view's pending fit / top / center requests and follows the
 * selection (view commands: `view set x= y=`); recentre: the canvas changed
 * size, so a selection it no longer shows whole is centred. Returns the
 * flags of the commands it ran. */
int tui_fit(tui_app *a, int recentre);
/* The first view of a model: selects its first computing node (the one
 * that reads the inputs) and asks to show it at the top of the canvas. */
int tui_view_start(tui_app *a);

#endif
