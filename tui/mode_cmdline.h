/*
 * mode_cmdline.h — the command-line mode: ':' commands and '/' searches
 * typed on the bottom row.
 */
#ifndef PB_TUI_MODE_CMDLINE_H
#define PB_TUI_MODE_CMDLINE_H

#include "mode.h"

/* Opens the line with prompt ":" (complete = 1: Tab completes) or "/". */
void tui_cmdline_open(tui_app *a, const char *prompt, int complete);
extern const tui_mode tui_mode_cmdline;

#endif
