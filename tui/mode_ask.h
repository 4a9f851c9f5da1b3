/*
 * mode_ask.h — the ask mode: a question on the bottom row answered by one
 * key, while the rest of the screen keeps working (layout, jobs, output).
 */
#ifndef PB_TUI_MODE_ASK_H
#define PB_TUI_MODE_ASK_H

#include "mode.h"

/* Called with the key pressed (one of keys), or 0 for Esc / Ctrl-C; returns
 * flags. */
typedef int (*tui_answer_fn)(tui_app *a, int answer, void *ud);

/* Shows question and waits for one of the keys in `keys`; answered calls
 * on_answer(a, key, ud); ud (may be NULL) is free()d after it. */
void tui_ask_open(tui_app *a, const char *question, const char *keys, tui_answer_fn on_answer,
                  void *ud);
extern const tui_mode tui_mode_ask;

#endif
