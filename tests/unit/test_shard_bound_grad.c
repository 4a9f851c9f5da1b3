/*
 * test_shard_bound_grad.c — the pipeline cutoff of a stage MILP with its
 * gradient allowance (strategy_milp.c, discounted_cut): a chunk plan of
 * time t and gradient all-reduces g helps only when t - w g is below the
 * cutoff, so the root LP of t - w g above it cuts the chunk, where the test
 * on t alone (t < cutoff + w x the largest g of any plan) does not. And the
 * test never cuts a chunk that has a plan below the cutoff.
 */
#include "gpt_fixture.h"

#include "shard/search/search_report.h"
#include "shard/strategy/strategy_grad.h"
#include "shard/strategy/strategy_problem.h"
#include "shard/strategy/strategy_milp.h"

static pb_shard_problem *build(const pb_graph *g, const pb_cluster *c, const char *scheme,
                               const pb_shard_opts *o)
{
	pb_mesh m;
	pb_error err = {0};
	assert_int_equal(pb_cluster_mesh_parse(&m, c, scheme, &err), PB_OK);
	pb_shard_problem *p = NULL;
	assert_int_equal(pb_strategy_problem_build(g, c, &m, o, &p, &err), PB_OK);
	return p;
}

/* The least t - w g over the plans that fit: p's group costs lowered by w x
 * their members' gradient all-reduces (a group sharing another's arrays
 * gets them through it), solved by GLPK; the costs are put back. */
static double least_discounted(pb_shard_problem *p, double w)
{
	double **keep = calloc((size_t)p->n_groups, sizeof *keep);
	for (int G = 0; G < p->n_groups; G++) {
		pb_shard_group *gr = &p->groups[G];
		if (gr->same_as >= 0)
			continue;
		keep[G] = malloc((size_t)gr->n_strat * sizeof(double));
		memcpy(keep[G], gr->cost, (size_t)gr->n_strat * sizeof(double));
		for (int s = 0; s < gr->n_strat; s++)
			for (int k = 0; k < gr->n_members; k++) {
				int v = gr->members[k];
				gr->cost[s] -= w * pb_strategy_grad_node(p, v, p->nodes[v].pick[s]);
			}
	}
	pb_shard_result r;
	pb_error err = {0};
	assert_int_equal(pb_strategy_milp_solve(p, NULL, NULL, NULL, &r, &err), PB_OK);
	assert_true(r.optimal);
	double d = r.objective;
	pb_strategy_problem_result_free(&r);
	for (int G = 0; G < p->n_groups; G++) {
		if (keep[G])
			memcpy(p->groups[G].cost, keep[G],
			       (size_t)p->groups[G].n_strat * sizeof(double));
		free(keep[G]);
	}
	free(keep);
	return d;
}

/* p solved with the pipeline's cutoff (cutoff, w): 1 when cut. */
static int cut_at(pb_shard_problem *p, double cutoff, double w, pb_shard_result *r)
{
	pb_error err = {0};
	p->opts.cutoff = cutoff;
	p->opts.cutoff_grad = w;
	int rc = pb_strategy_milp_solve(p, NULL, NULL, NULL, r, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	return r->cut;
}

/* A 2-layer decoder in training, data x tensor on 8 devices, each
 * recomputation choice, the device memory halfway from the least to that of
 * the plan without a limit (it binds: plans replicating more do not fit),
 * t* the optimum there, w = 0.9, D* the
 * least t - w g of a plan that fits. A cutoff at 3/4 of D* cuts the chunk
 * (the root LP is within 20% of D* here), although t* is below the cutoff
 * plus w x the largest gradient time (the test on t alone lets it through);
 * a cutoff just above D* does not, and the plan found there costs t*. */
static void test_discounted_cut(void **state)
{
	(void)state;
	pb_graph *g = pb_test_gpt(2, 256, 4, 32, 200, 8);
	pb_cluster c;
	pb_test_cluster_file("layouts/cluster-2x8.lua", &c);
	c.n_devices = 8;
	c.devices_per_node = 4;
	c.nodes = 2;
	const char *schemes[] = {"2x4", "8"};
	double w = 0.9;
	int checked = 0;
	for (int si = 0; si < 2; si++)
		for (int k = PB_RECOMP_NONE; k <= PB_RECOMP_FULL; k++) {
			pb_shard_opts o;
			pb_strategy_problem_opts_default(&o);
			o.layers = 1;
			o.train = 1;
			o.optimizer = PB_OPTIM_ADAM;
			o.recompute = k;
			pb_shard_problem *p = build(g, &c, schemes[si], &o);
			pb_shard_result ref, r;
			assert_false(cut_at(p, 0, 0, &ref));
			/* memory binding: halfway from the least to the loose plan's */
			double lo = pb_strategy_problem_min_memory(p);
			p->cl.memory = lo + 0.5 * (ref.memory - lo);
			pb_strategy_problem_result_free(&ref);
			assert_false(cut_at(p, 0, 0, &ref));
			assert_true(ref.feasible);
			double d = least_discounted(p, w), gmax = pb_strategy_grad_max(p);
			assert_true(d < ref.objective);
			/* t alone cannot cut: t* is below cutoff + w gmax */
			assert_true(ref.objective < 0.75 * d + w * gmax);
			assert_true(cut_at(p, 0.75 * d, w, &r));
			pb_strategy_problem_result_free(&r);
			/* a plan below the cutoff: never cut */
			assert_false(cut_at(p, d * (1 + 1e-6), w, &r));
			assert_true(r.objective <= ref.objective * (1 + 1e-9));
			pb_strategy_problem_result_free(&r);
			pb_strategy_problem_result_free(&ref);
			pb_strategy_problem_free(p);
			checked++;
		}
	assert_int_equal(checked, 6);
	pb_cluster_free(&c);
	pb_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_discounted_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
