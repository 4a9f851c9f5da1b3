/*
 * spec_cands.c — the selected operator's candidate specs (spec_cands.h).
 *
 * Computed once per (plan, layout, selection): one operator's strategy menu
 * on the plan's scheme (a problem of that operator alone, well under a
 * millisecond on a GPT layer), with the session's Lua candidate filters
 * marking what they refuse; so moving the selection stays instant.
 */
#include <stdlib.h>
#include <string.h>

#include "cmds/spec_cands.h"
#include "output.h"
#include "spec_cands.h"

void tui_cands_free(tui_app *a)
{
	free(a->cands.c);
	memset(&a->cands, 0, sizeof a->cands);
	a->cands.nid = -1;
}

int tui_cands_refresh(tui_app *a)
{
	tui_cands *k = &a->cands;
	const pb_session *s = a->s;
	int nid = tui_selected(a);
	int shard = s->plan && s->graph && s->hw && !strcmp(s->plan->kind, "shard");
	if (a->job || (k->valid && k->gen == a->plan_gen && k->cmd_gen == a->cmd_gen &&
	               k->hw == (const void *)s->hw && k->nid == nid))
		return 0;
	if (!shard) {
		if (!k->valid && !k->c)
			return 0;
		tui_cands_free(a);
		return PB_REDRAW_TABLE;
	}
	tui_cands_free(a);
	k->valid = 1;
	k->gen = a->plan_gen;
	k->cmd_gen = a->cmd_gen;
	k->hw = s->hw;
	k->nid = nid;
	pb_error err = {0};
	if (nid < 0 || pb_spec_cands_of(a->s, nid, &k->c, &k->n, &err) != PB_OK) {
		snprintf(k->err, sizeof k->err, "%s", nid < 0 ? "no node selected" : err.msg);
		k->c = NULL;
		k->n = 0;
	}
	for (int i = 0; i < k->n; i++)
		if (k->c[i].current)
			k->cursor = i;
	return PB_REDRAW_TABLE;
}

const tui_cands *tui_cands_of(const tui_app *a, int nid)
{
	const tui_cands *k = &a->cands;
	return k->valid && k->gen == a->plan_gen && k->nid == nid ? k : NULL;
}

int tui_cands_move(tui_app *a, int d)
{
	tui_cands *k = &a->cands;
	if (!tui_cands_of(a, tui_selected(a)) || k->n == 0) {
		tui_out(a, 1, "no candidate specs here (select an operator of a 'shard' plan)%s%s",
		        k->err[0] ? ": " : "", k->err);
		return PB_REDRAW_STATUS;
	}
	k->cursor += d;
	k->cursor = k->cursor < 0 ? 0 : k->cursor >= k->n ? k->n - 1 : k->cursor;
	return PB_REDRAW_TABLE;
}

/* s as one double-quoted command argument. */
static void quoted(const char *s, char *buf, size_t n)
{
	size_t k = 0;
	if (n < 3)
		return;
	buf[k++] = '"';
	for (; *s && k + 3 < n; s++) {
		if (*s == '"' || *s == '\\')
			buf[k++] = '\\';
		buf[k++] = *s;
	}
	buf[k++] = '"';
	buf[k] = 0;
}

int tui_cands_pin_line(const tui_app *a, int nid, int k, char *line, size_t n, char *why, size_t wn)
{
	const tui_cands *c = tui_cands_of(a, nid);
	line[0] = 0;
	if (!c || c->n == 0 || k < 0 || k >= c->n) {
		snprintf(why, wn,
		         "no candidate spec to pin (select an operator of a 'shard' plan)%s%s",
		         c && c->err[0] ? ": " : "", c ? c->err : "");
		return 0;
	}
	char name[300], spec[64];
	quoted(a->s->graph->nodes[nid].name, name, sizeof name);
	quoted(c->c[k].label, spec, sizeof spec);
	snprintf(line, n, "pin --node %s --spec %s", name, spec);
	return 1;
}

int tui_cands_row_at(const tui_app *a, int y)
{
	const tui_cands *c = tui_cands_of(a, tui_selected(a));
	if (!c || y < c->row0 || y >= c->row0 + c->n_drawn)
		return -1;
	return c->first + (y - c->row0);
}
