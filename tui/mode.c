/*
 * mode.c — the stack of input modes (mode.h). Leaving a mode redraws the
 * whole screen, since its line or screen covered part of the views.
 */
#include "mode.h"

int tui_mode_push(tui_app *a, const tui_mode *m, void *data)
{
	if (a->n_modes == TUI_MODES_MAX) {
		if (m->close)
			m->close(data);
		return -1;
	}
	a->modes[a->n_modes].mode = m;
	a->modes[a->n_modes++].data = data;
	a->redraw |= PB_REDRAW_ALL;
	return 0;
}

int tui_mode_remove(tui_app *a, const tui_mode *m)
{
	for (int i = a->n_modes - 1; i >= 0; i--) {
		if (a->modes[i].mode != m)
			continue;
		if (m->close)
			m->close(a->modes[i].data);
		for (int k = i; k + 1 < a->n_modes; k++)
			a->modes[k] = a->modes[k + 1];
		a->n_modes--;
		a->redraw |= PB_REDRAW_ALL;
		return 0;
	}
	return -1;
}

tui_mode_entry *tui_mode_top(tui_app *a)
{
	return a->n_modes ? &a->modes[a->n_modes - 1] : NULL;
}

int tui_mode_on(const tui_app *a, const tui_mode *m)
{
	for (int i = 0; i < a->n_modes; i++)
		if (a->modes[i].mode == m)
			return 1;
	return 0;
}

void tui_mode_clear(tui_app *a)
{
	while (a->n_modes > 0) {
		tui_mode_entry *e = &a->modes[--a->n_modes];
		if (e->mode->close)
			e->mode->close(e->data);
	}
}
