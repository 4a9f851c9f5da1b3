/*
 * mode_pager.h — the pager mode: long text (help, all output) on the whole
 * screen, scrolled both ways, while a job keeps running.
 */
#ifndef PB_TUI_MODE_PAGER_H
#define PB_TUI_MODE_PAGER_H

#include "mode.h"

/* Pushes a pager over text (copied). */
void tui_pager_open(tui_app *a, const char *title, const char *text);
extern const tui_mode tui_mode_pager;

#endif
