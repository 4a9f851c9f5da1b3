/*
 * hooks_solver.c — the steppable form of a solver run under Lua hooks
 * (hooks_solver.h). A batch run keeps its pb_hooks on the stack for the
 * length of one command; a solver attached with --start outlives the
 * command, and its callbacks (the action mask) point at the hooks, so the
 * wrapper owns them and frees them after the solver. Invariant: the inner
 * solver's history is not kept (the wrapper's is the one pb_solver_step
 * records); name, incumbent and stats are the inner solver's.
 */
#include "script/hooks_solver.h"

#include <stdlib.h>

typedef struct hooked {
	pb_solver base;
	pb_solver_ops ops;
	pb_solver *inner;
	pb_hooks *h;
} hooked;

/* The first script error of the hooks as the step's error. */
static int script_failed(pb_hooks *h, pb_error *err)
{
	*err = h->err;
	return h->err.code ? h->err.code : PB_EINPUT;
}

static int hooked_step(pb_solver *s, int budget, pb_solver_progress *p, pb_error *err)
{
	hooked *w = s->state;
	if (w->h->failed)
		return script_failed(w->h, err);
	int rc = w->inner->ops->step(w->inner, budget, p, err);
	if (!rc && w->h->failed)
		rc = script_failed(w->h, err);
	return rc;
}

static const pb_plan *hooked_incumbent(pb_solver *s)
{
	hooked *w = s->state;
	return pb_solver_incumbent(w->inner);
}

static void hooked_stats(pb_solver *s, FILE *out)
{
	hooked *w = s->state;
	if (w->inner->ops->stats)
		w->inner->ops->stats(w->inner, out);
}

static pb_solver *hooked_inner(pb_solver *s)
{
	hooked *w = s->state;
	return w->inner;
}

static void hooked_free(pb_solver *s)
{
	hooked *w = s->state;
	pb_error e = {0};
	pb_solver_free(w->inner); /* before the hooks its callbacks point at */
	pb_hooks_finish(w->h, PB_OK, &e);
	free(w->h);
	free(w);
}

pb_solver *pb_hooks_solver_new(pb_solver *inner, pb_hooks *h)
{
	hooked *w = calloc(1, sizeof *w);
	if (!w) {
		pb_error e = {0};
		pb_solver_free(inner);
		pb_hooks_finish(h, PB_OK, &e);
		free(h);
		return NULL;
	}
	w->ops = (pb_solver_ops){.name = inner->ops->name,
	                         .step = hooked_step,
	                         .incumbent = hooked_incumbent,
	                         .stats = hooked_stats,
	                         .free = hooked_free,
	                         .inner = hooked_inner};
	w->inner = inner;
	w->h = h;
	w->base.ops = &w->ops;
	w->base.state = w;
	w->base.bound = inner->bound;
	return &w->base;
}
