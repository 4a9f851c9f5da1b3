/*
 * exact_labels.c — the exact optimum of the chain partition under rules
 * (chain_rules.h) and for the weighted objective (chain_problem.h), where
 * the bisection on the bottleneck (exact.c) does not apply: rules tie a
 * group to its first core, and the weighted objective is a sum of three
 * maxima, not one bottleneck.
 *
 * A DP over states (position b, cores used u): the layers [0, b) are split
 * into groups on the cores [0, u). A label of a state is what the groups so
 * far contribute: max(t) in "max_time" mode (one label per state, the
 * smallest), or the triple (max compute, max storage, max routing) in
 * "weighted" mode, where every label that no other label of the state
 * dominates is kept (a Pareto set: the objective is monotone in each of the
 * three, so a dominated label never leads to a better plan). A transition
 * adds the group [a, b) on the cores [u - c, u) when the rules allow it:
 * no forbidden boundary at a or b, no forced one strictly inside, every
 * pinned layer of [a, b) pinned to one of its cores; and, when some
 * partition fits the memory, its storage fits. The last group ends on the
 * last core (more cores never make a group slower, larger or more
 * talkative). Labels whose objective already exceeds the incumbent of a
 * quick heuristic (greedy, then block moves) are dropped: the objective
 * only grows along a path. For a fixed end and core count, extending the
 * group to the left only adds MACs, bytes and storage (chain_problem.h), so
 * the scan stops at the first segment over the incumbent or the memory.
 *
 * Work: O(m^2 n^2 L) combinations for L labels per state, O(m^2 n)
 * segment evaluations. In weighted mode the Pareto sets can grow; past
 * PB_LABELS_MAX labels the DP stops and says it is not exact (the caller
 * then reports the heuristic and names the MILP as the reference).
 */
#include "partition/chain/exact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "partition/chain/baselines.h"
#include "partition/chain/chain_rules.h"
#include "util/grow.h"

typedef struct label {
	double c, s, r; /* weighted: max compute, storage, routing; max_time: r = max(t) */
	int prev;       /* label index of the previous state, -1 at the start */
	int a, cores;   /* the group that led here: layers [a, b) on `cores` cores */
	int next;       /* next live label of the same state, -1 at the end */
} label;

typedef struct ldp {
	pb_part_problem *P;
	int weighted, use_memory;
	double ub;
	label *pool;
	long n_pool, cap_pool;
	int *head; /* per state: first live label, -1 none */
	int overflow;
} ldp;

static double lobj(const ldp *D, double c, double s, double r)
{
	const pb_manycore *h = &D->P->hw;
	if (!D->weighted)
		return r;
	return h->w_compute * c * 1e3 + h->w_storage * s / (1024.0 * 1024.0) +
	       h->w_routing * r * 1e3;
}

static int add_label(ldp *D, int st, const label *x)
{
	double ox = lobj(D, x->c, x->s, x->r);
	if (ox > D->ub)
		return 0;
	int *link = &D->head[st];
	while (*link >= 0) {
		label *y = &D->pool[*link];
		int y_dom =
		    D->weighted ? (y->c <= x->c && y->s <= x->s && y->r <= x->r) : y->r <= x->r;
		if (y_dom)
			return 0;
		int x_dom = D->weighted ? (x->c <= y->c && x->s <= y->s && x->r <= y->r) : 1;
		if (x_dom)
			*link = y->next; /* unlink the dominated label */
		else
			link = &y->next;
	}
	if (D->n_pool >= (D->P->max_labels > 0 ? D->P->max_labels : PB_LABELS_MAX)) {
		D->overflow = 1;
		return -1;
	}
	if (D->n_pool == D->cap_pool) {
		label *np = pb_grow(D->pool, &D->cap_pool, sizeof *np, 4096);
		if (!np) {
			D->overflow = 1;
			return -1;
		}
		D->pool = np;
	}
	label *z = &D->pool[D->n_pool];
	*z = *x;
	z->next = D->head[st];
	D->head[st] = (int)D->n_pool++;
	return 1;
}

/* Runs the DP; returns 1 with the best state in ac, 0 when no partition
 * obeys the rules (within the memory when use_memory), -1 on overflow. */
static int run(ldp *D, int *ac, double *best_obj)
{
	pb_part_problem *P = D->P;
	int m = P->m, n = P->n, N = n + 1;
	D->n_pool = 0;
	D->overflow = 0;
	for (long i = 0; i < (long)(m + 1) * N; i++)
		D->head[i] = -1;
	label start = {0, 0, 0, -1, 0, 0, -1};
	D->ub = INFINITY;
	add_label(D, 0, &start);
	D->ub = *best_obj;
	for (int b = 1; b <= m; b++) {
		if (b < m && P->cut && P->cut[b] == PB_CUT_FORBID)
			continue;
		for (int c = 1; c <= n; c++) {
			int pmin = n, pmax = -1;
			for (int a = b - 1; a >= 0; a--) {
				/* a + 1 .. b - 1 are inside the group */
				if (a + 1 < b && P->cut && P->cut[a + 1] == PB_CUT_FORCE)
					break;
				if (P->pin && P->pin[a] >= 0) {
					if (P->pin[a] < pmin)
						pmin = P->pin[a];
					if (P->pin[a] > pmax)
						pmax = P->pin[a];
				}
				if (pmax >= 0 && pmax - pmin + 1 > c)
					break; /* the pins need more cores than c */
				pb_part_group g;
				pb_part_eval_group(P, a, b, c, &g);
				if (D->use_memory && g.storage > P->hw.memory)
					break;
				double gc = g.compute, gs = g.storage,
				       gr = D->weighted ? g.routing : g.time;
				if (lobj(D, gc, gs, gr) > D->ub)
					break;
				if (a > 0 && P->cut && P->cut[a] == PB_CUT_FORBID)
					continue;
				/* first core f = u - c; the last group ends on the last core */
				int ulo = c, uhi = b == m ? n : n - 1;
				if (b == m)
					ulo = n;
				if (pmax >= 0) {
					/* f <= pmin and f + c - 1 >= pmax */
					if (pmax + 1 > ulo)
						ulo = pmax + 1;
					if (pmin + c < uhi)
						uhi = pmin + c;
				}
				for (int u = ulo; u <= uhi; u++) {
					for (int li = D->head[a * N + (u - c)]; li >= 0;
					     li = D->pool[li].next) {
						const label *L = &D->pool[li];
						label x = {L->c > gc ? L->c : gc,
						           L->s > gs ? L->s : gs,
						           L->r > gr ? L->r : gr,
						           li,
						           a,
						           c,
						           -1};
						if (add_label(D, b * N + u, &x) < 0)
							return -1;
					}
				}
			}
		}
	}
	int bi = -1;
	double bo = INFINITY;
	for (int li = D->head[m * N + n]; li >= 0; li = D->pool[li].next) {
		double o = lobj(D, D->pool[li].c, D->pool[li].s, D->pool[li].r);
		if (o < bo) {
			bo = o;
			bi = li;
		}
	}
	if (bi < 0)
		return 0;
	/* Walk back: groups from the last to the first. */
	int ng = 0, *cores = malloc((size_t)n * 2 * sizeof *cores), *layers;
	if (!cores)
		return -1;
	layers = cores + n;
	int b = m;
	for (int li = bi; D->pool[li].prev >= 0; li = D->pool[li].prev) {
		cores[ng] = D->pool[li].cores;
		layers[ng] = b - D->pool[li].a;
		b = D->pool[li].a;
		ng++;
	}
	for (int i = 0; i < ng / 2; i++) {
		int t = cores[i];
		cores[i] = cores[ng - 1 - i];
		cores[ng - 1 - i] = t;
		t = layers[i];
		layers[i] = layers[ng - 1 - i];
		layers[ng - 1 - i] = t;
	}
	pb_part_state_from_groups(ng, cores, layers, ac);
	free(cores);
	*best_obj = bo;
	return 1;
}

int pb_part_exact_labels(pb_part_problem *P, int *ac, double *objective, int *memory_feasible,
                         int *exact, pb_error *err)
{
	int m = P->m, n = P->n;
	ldp D = {0};
	D.P = P;
	D.weighted = P->hw.reward_mode == PB_REWARD_WEIGHTED;
	D.head = malloc((size_t)(m + 1) * (size_t)(n + 1) * sizeof *D.head);
	int *heur = malloc((size_t)n * sizeof *heur);
	if (!D.head || !heur) {
		free(D.head);
		free(heur);
		return pb_err(err, PB_ENOMEM, "exact: out of memory");
	}
	/* Incumbent: greedy and block moves (they obey the rules through
	 * pb_part_objective when they can). Its objective prunes the labels
	 * only when it obeys the rules and fits the memory. */
	pb_part_greedy(P, heur);
	pb_part_local_search(P, heur, 4 * n);
	pb_part_eval ev;
	pb_part_evaluate(P, heur, &ev, NULL);
	double inc = ev.violations || ev.over_memory ? INFINITY : ev.objective * (1 + 1e-12);
	*exact = 1;
	int rc = PB_OK;
	D.use_memory = 1;
	double best = inc;
	int r = run(&D, ac, &best);
	if (r == 0) {
		/* Nothing within the memory obeys the rules: ignore the memory, as
		 * the bisection does when no partition fits at all. */
		D.use_memory = 0;
		best = INFINITY;
		r = run(&D, ac, &best);
	}
	*memory_feasible = D.use_memory;
	if (r == 0) {
		rc = pb_err(err, PB_EINPUT,
		            "partition: no partition of the %d layers on the %d cores of %s obeys "
		            "the rules (cut and core rules contradict each other or need more "
		            "groups than cores)",
		            m, n, P->hw.path[0] ? P->hw.path : P->hw.name);
	} else if (r < 0) {
		/* Too many labels: the heuristic incumbent is all there is. */
		*exact = 0;
		memcpy(ac, heur, (size_t)n * sizeof *ac);
		best = ev.objective;
	}
	if (rc == PB_OK) {
		pb_part_evaluate(P, ac, &ev, NULL);
		*objective = ev.objective;
		(void)best;
	}
	free(D.pool);
	free(D.head);
	free(heur);
	return rc;
}
