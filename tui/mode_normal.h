/*
 * mode_normal.h — the normal mode: keys run commands of the key table.
 */
#ifndef PB_TUI_MODE_NORMAL_H
#define PB_TUI_MODE_NORMAL_H

#include <stdio.h>

#include "mode.h"

/* Writes the key table and the command list (the '?' help). */
void tui_keys_help(FILE *out);
extern const tui_mode tui_mode_normal;

#endif
