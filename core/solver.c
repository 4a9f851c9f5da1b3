/* solver.c — the generic wrapper around a solver's operations (solver.h). */
#include "solver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/job.h"

int pb_solver_step(pb_solver *s, int budget, pb_solver_progress *p, pb_error *err)
{
	memset(p, 0, sizeof *p);
	p->bound = NAN;
	p->fraction = -1;
	int rc = s->ops->step(s, budget, p, err);
	if (rc == PB_OK) {
		if (s->n_history == s->cap_history) {
			int nc = s->cap_history ? s->cap_history * 2 : 64;
			double *nh = realloc(s->history, (size_t)nc * sizeof *nh);
			if (!nh)
				return pb_err(err, PB_ENOMEM, "solver %s: out of memory",
				              s->ops->name);
			s->history = nh;
			s->cap_history = nc;
		}
		s->history[s->n_history++] = p->incumbent;
		s->bound = p->bound;
	}
	pb_job_tick();
	return rc;
}

const pb_plan *pb_solver_incumbent(pb_solver *s)
{
	return s->ops->incumbent(s);
}

pb_solver *pb_solver_innermost(pb_solver *s)
{
	while (s && s->ops->inner)
		s = s->ops->inner(s);
	return s;
}

void pb_solver_free(pb_solver *s)
{
	if (!s)
		return;
	double *h = s->history;
	s->ops->free(s); /* frees s->state and s itself */
	free(h);
}
