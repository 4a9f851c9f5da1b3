/*
 * mesh_plan.c — placed partition plans on a routed mesh (mesh_plan.h): the
 * plan's figures from the mesh cost, detail.mesh, and the placement methods
 * run on a finished plan (snake, local search, enumeration).
 */
#include "partition/mesh/mesh_plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partition/chain/exact.h"
#include "partition/mesh/mesh_place.h"

static json_t *rc_pair(const pb_mesh_grid *g, int core)
{
	return json_pack("[ii]", core / g->cols, core % g->cols);
}

static json_t *link_json(const pb_mesh_grid *g, int link, double bytes, double link_bw)
{
	int from, to;
	pb_mesh_route_ends(g, link, &from, &to);
	return json_pack("{s:o, s:o, s:f, s:f}", "from", rc_pair(g, from), "to", rc_pair(g, to),
	                 "bytes", bytes, "time", bytes / link_bw);
}

static void set_num(json_t *o, const char *k, double v)
{
	json_object_set_new(o, k, isfinite(v) ? json_real(v) : json_null());
}

static json_t *mesh_json(const pb_mesh_cost *C, const int *owner, const pb_mesh_eval *ev,
                         double bound)
{
	const pb_manycore *hw = &C->P->hw;
	const pb_mesh_grid *g = &C->grid;
	json_t *m = json_object(), *pl = json_array(), *gc = json_array(), *links = json_array();
	json_object_set_new(m, "rows", json_integer(g->rows));
	json_object_set_new(m, "cols", json_integer(g->cols));
	json_object_set_new(m, "routing", json_string(g->yx ? "yx" : "xy"));
	json_object_set_new(m, "link_gbs", json_real(hw->link_bw / 1e9));
	json_object_set_new(m, "hop_ns", json_real(hw->hop_s * 1e9));
	json_object_set_new(m, "io", json_pack("[ii]", hw->io_row, hw->io_col));
	for (int c = 0; c < C->n; c++)
		json_array_append_new(pl, json_integer(owner[c]));
	for (int q = 0; q < C->n_groups; q++) {
		json_t *cs = json_array();
		for (int c = 0; c < C->n; c++)
			if (owner[c] == q)
				json_array_append_new(cs, rc_pair(g, c));
		json_array_append_new(gc, cs);
	}
	for (int l = 0; l < 4 * C->n; l++)
		if (C->load[l] > 0)
			json_array_append_new(links, link_json(g, l, C->load[l], hw->link_bw));
	json_object_set_new(m, "placement", pl);
	json_object_set_new(m, "group_cores", gc);
	json_object_set_new(m, "links", links);
	json_object_set_new(m, "max_time", json_real(ev->max_time));
	set_num(m, "lower_bound", bound);
	set_num(m, "gap_to_lower_bound", bound > 0 ? ev->objective / bound - 1 : NAN);
	/* proved only when the plan reaches the bound */
	json_object_set_new(m, "optimal",
	                    json_boolean(bound > 0 && ev->objective <= bound * (1 + 1e-9)));
	json_object_set_new(m, "hop_bytes", json_real(ev->hop_bytes));
	json_object_set_new(m, "link_share", json_real(ev->link_share));
	json_object_set_new(m, "most_loaded_link",
	                    ev->hot_link >= 0
	                        ? link_json(g, ev->hot_link, ev->hot_load, hw->link_bw)
	                        : json_null());
	return m;
}

int pb_mesh_plan_apply(pb_part_problem *P, const int *ac, const int *owner, pb_plan *plan,
                       double bound, pb_error *err)
{
	pb_mesh_cost C;
	int rc = pb_mesh_cost_init(&C, P, ac, err);
	if (rc)
		return rc;
	int *own = malloc((size_t)P->n * sizeof *own);
	if (!own) {
		pb_mesh_cost_free(&C);
		return pb_err(err, PB_ENOMEM, "mesh plan: out of memory");
	}
	if (owner)
		memcpy(own, owner, (size_t)P->n * sizeof *own);
	else
		pb_mesh_place_snake(C.n_groups, C.gsize, C.order, own);
	pb_mesh_eval ev;
	pb_mesh_cost_eval(&C, own, &ev);
	for (int k = 0; k < plan->n_groups && k < C.n_groups; k++) {
		pb_plan_group *pg = &plan->groups[k];
		const pb_mesh_gtime *gt = &C.g[k];
		pg->time = gt->time;
		pg->compute = gt->compute;
		pg->routing = gt->routing;
		pg->storage = gt->storage;
		pg->bottleneck = k == ev.bottleneck;
		pg->over_memory = gt->storage > P->hw.memory;
	}
	pb_plan_set_metric(plan, "max_time", ev.max_time);
	pb_plan_set_metric(plan, "reward", ev.reward);
	pb_plan_set_metric(plan, "objective", ev.objective);
	pb_plan_set_metric(plan, "max_compute", ev.max_compute);
	pb_plan_set_metric(plan, "max_routing", ev.max_routing);
	pb_plan_set_metric(plan, "max_storage", ev.max_storage);
	if (P->rules)
		pb_plan_set_metric(plan, "rule_violations", ev.violations);
	/* the 1-D optimum bounds the placed problem; it is not its optimum */
	pb_plan_set_metric(plan, "optimum", NAN);
	pb_plan_set_metric(plan, "gap", NAN);
	pb_plan_set_metric(plan, "mesh_lower_bound", bound);
	pb_plan_set_metric(plan, "mesh_gap", bound > 0 ? ev.objective / bound - 1 : NAN);
	json_object_set_new(plan->detail, "mesh", mesh_json(&C, own, &ev, bound));
	free(own);
	pb_mesh_cost_free(&C);
	return PB_OK;
}

int pb_mesh_plan_owner(const pb_plan *plan, int n, int *owner)
{
	const json_t *pl = json_object_get(json_object_get(plan->detail, "mesh"), "placement");
	if (!json_is_array(pl) || (int)json_array_size(pl) != n)
		return 0;
	for (int c = 0; c < n; c++) {
		const json_t *v = json_array_get(pl, (size_t)c);
		if (!json_is_integer(v))
			return 0;
		owner[c] = (int)json_integer_value(v);
	}
	return 1;
}

static double wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The routing-free bound and the snake placement of the 1-D optimum. */
static int reference(pb_part_problem *P, pb_mesh_place_report *rep, pb_error *err)
{
	int *ac = malloc((size_t)P->n * sizeof *ac), *own = malloc((size_t)P->n * sizeof *own);
	double opt;
	int feasible, rc = !ac || !own ? pb_err(err, PB_ENOMEM, "mesh plan: out of memory")
	                               : pb_part_exact_solve(P, &opt, ac, &feasible, err);
	pb_mesh_cost C;
	if (!rc && !(rc = pb_mesh_cost_init(&C, P, ac, err))) {
		pb_mesh_eval ev;
		pb_mesh_place_snake(C.n_groups, C.gsize, C.order, own);
		pb_mesh_cost_eval(&C, own, &ev);
		rep->snake = ev.max_time;
		/* max(t) of the 1-D optimum bounds every placed plan (mesh_cost.h); the
		 * weighted objective's routing term changes on a mesh: no bound */
		rep->bound = P->hw.reward_mode == PB_REWARD_MAX_TIME ? opt : NAN;
		pb_mesh_cost_free(&C);
	}
	free(ac);
	free(own);
	return rc;
}

/* The agent's placement actions (rl_place.h) from own: its network from
 * o->agent, the layout's shipped agent, or a fresh one. */
static int place_rl(pb_mesh_cost *C, const pb_mesh_place_opts *o, int *own, pb_mesh_eval *ev,
                    pb_mesh_place_report *rep, pb_error *err)
{
	const pb_part_problem *P = C->P;
	pb_rl_policy *pol = NULL;
	long ep = 0;
	const char *agent = o->agent;
	if (!agent &&
	    pb_rl_place_default_agent(P->hw.path, P->n, rep->agent, (int)sizeof rep->agent))
		agent = rep->agent;
	int rc = PB_OK;
	if (agent && strcmp(agent, "none") != 0) {
		if (agent != rep->agent)
			snprintf(rep->agent, sizeof rep->agent, "%s", agent);
		rc = pb_rl_place_load(agent, P->n, &pol, &ep, err);
	} else {
		rep->agent[0] = 0;
		pol = pb_rl_place_policy_new(P->n, 32, o->seed ? o->seed : 1);
		if (!pol)
			rc = pb_err(err, PB_ENOMEM, "placement agent: out of memory");
	}
	if (rc)
		return rc;
	pb_rl_place_config cfg;
	pb_rl_place_config_default(&cfg);
	cfg.seed = o->seed ? o->seed : 1;
	cfg.seconds = o->rl_seconds;
	cfg.episodes = o->rl_episodes > 0  ? o->rl_episodes
	               : o->rl_seconds > 0 ? 0
	                                   : PB_MESH_RL_EPISODES;
	rc = pb_rl_place_train(C, pol, &cfg, own, ev, &rep->rl, err);
	pb_rl_policy_free(pol);
	return rc;
}

int pb_mesh_plan_place(pb_part_problem *P, const pb_plan *plan, const pb_mesh_place_opts *o,
                       pb_plan **out, pb_mesh_place_report *rep, pb_error *err)
{
	memset(rep, 0, sizeof *rep);
	rep->place_bound = NAN;
	*out = NULL;
	const char *how = o->how ? o->how : "local";
	long max_evals = o->max_evals > 0 ? o->max_evals : PB_MESH_LOCAL_EVALS;
	double seconds = o->seconds > 0 ? o->seconds : PB_MESH_MILP_SECONDS;
	int mode = !strcmp(how, "snake")   ? 0
	           : !strcmp(how, "local") ? 1
	           : !strcmp(how, "exact") ? 2
	           : !strcmp(how, "milp")  ? 3
	           : !strcmp(how, "rl")    ? 4
	                                   : -1;
	if (mode < 0)
		return pb_err(err, PB_EUSAGE,
		              "--place must be one of " PB_MESH_PLACE_NAMES ", got '%s'", how);
	if (!P->hw.mesh_routed)
		return pb_err(
		    err, PB_EUSAGE,
		    "%s: no routed mesh (mesh.link_gbs and mesh.hop_ns): nothing to place",
		    P->hw.path);
	int n = P->n;
	int *ac = malloc((size_t)n * sizeof *ac), *own = malloc((size_t)n * sizeof *own);
	pb_mesh_cost C;
	int rc = !ac || !own ? pb_err(err, PB_ENOMEM, "mesh plan: out of memory")
	                     : pb_part_from_plan(P, plan, ac, err);
	if (!rc)
		rc = reference(P, rep, err);
	if (!rc)
		rc = pb_mesh_cost_init(&C, P, ac, err);
	if (rc) {
		free(ac);
		free(own);
		return rc;
	}
	C.stop = o->stop;
	C.stop_ud = o->stop_ud;
	pb_mesh_eval ev;
	pb_mesh_place_snake(C.n_groups, C.gsize, C.order, own);
	pb_mesh_cost_eval(&C, own, &ev);
	rep->start = ev.objective;
	double t0 = wall();
	if (mode == 1)
		rc = pb_mesh_search_local(&C, own, max_evals, &ev, &rep->st, err);
	else if (mode == 2) {
		rc = pb_mesh_search_enumerate(&C, own, &ev, &rep->st.evals, err);
		rep->exact = !rc && !C.stopped;
	} else if (mode == 3) {
		/* the local search's placement is the MILP's start and cutoff */
		rc = pb_mesh_search_local(&C, own, max_evals, &ev, &rep->st, err);
		if (!rc)
			rc = pb_mesh_milp_place(&C, own, seconds, &ev, &rep->milp, err);
		rep->exact = !rc && rep->milp.proved;
		rep->place_bound = rep->milp.bound;
	} else if (mode == 4) {
		rc = place_rl(&C, o, own, &ev, rep, err);
		rep->st.evals = rep->rl.evals;
	}
	rep->stopped = C.stopped;
	rep->seconds = wall() - t0;
	rep->placed = ev.objective;
	if (!rc) {
		int *sizes = malloc((size_t)C.n_groups * sizeof *sizes);
		if (!sizes)
			rc = pb_err(err, PB_ENOMEM, "mesh plan: out of memory");
		else {
			/* count the kept placement: C.g holds the search's last trial */
			for (int q = 0; q < C.n_groups; q++)
				sizes[q] = 0;
			for (int c = 0; c < n; c++)
				sizes[own[c]]++;
			pb_part_state_from_groups(C.n_groups, sizes, C.layers, ac);
			free(sizes);
			*out = pb_part_to_plan(P, ac, plan->method, NAN);
			if (!*out)
				rc = pb_err(err, PB_ENOMEM, "mesh plan: out of memory");
		}
	}
	if (!rc)
		rc = pb_mesh_plan_apply(P, ac, own, *out, rep->bound, err);
	if (!rc) {
		json_t *m = json_object_get((*out)->detail, "mesh");
		set_num(m, "snake", rep->snake);
		json_object_set_new(m, "place",
		                    json_pack("{s:s, s:f, s:f, s:I, s:I, s:I, s:I, s:b, s:b, s:b}",
		                              "method", how, "start", rep->start, "seconds",
		                              rep->seconds, "evals", (json_int_t)rep->st.evals,
		                              "moves", (json_int_t)rep->st.moves, "exchanges",
		                              (json_int_t)rep->st.exchanges, "swaps",
		                              (json_int_t)rep->st.swaps, "local_optimum",
		                              mode == 1 && rep->st.local_optimum, "exact",
		                              rep->exact, "stopped", rep->stopped));
		if (mode == 4) {
			const pb_rl_place_stats *rs = &rep->rl;
			json_object_set_new(
			    json_object_get(m, "place"), "rl",
			    json_pack("{s:I, s:I, s:f, s:o, s:o, s:b}", "episodes",
			              (json_int_t)rs->episodes, "steps", (json_int_t)rs->steps,
			              "cpu_seconds", rs->seconds, "beat_snake_episode",
			              rs->beat_episode >= 0 ? json_integer(rs->beat_episode)
			                                    : json_null(),
			              "agent",
			              rep->agent[0] ? json_string(rep->agent) : json_null(),
			              "stopped", rs->stopped));
		}
		if (mode == 3) {
			json_t *pm = json_object_get(m, "place");
			set_num(pm, "bound", rep->place_bound);
			set_num(pm, "gap",
			        rep->place_bound > 0 ? rep->placed / rep->place_bound - 1 : NAN);
			json_object_set_new(pm, "nodes", json_integer(rep->milp.nodes));
			json_object_set_new(pm, "milp_seconds", json_real(rep->milp.seconds));
		}
		const json_t *costs = json_object_get(plan->detail, "costs");
		if (costs)
			json_object_set((*out)->detail, "costs", (json_t *)costs);
	} else {
		pb_plan_free(*out);
		*out = NULL;
	}
	pb_mesh_cost_free(&C);
	free(ac);
	free(own);
	return rc;
}
