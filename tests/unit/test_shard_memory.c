/*
 * test_shard_memory.c — training memory as frameworks count it
 * (strategy_problem.c): weights + gradients + Adam state (two fp32 moments,
 * an fp32 master copy of fp16 weights), ZeRO 1-3 dividing them over the
 * replicas of a shard, a shared parameter (the tied embedding) held once,
 * activation recomputation (selective: the attention core; full: the
 * blocks' boundaries and one block) with its extra forward pass, and the
 * search's automatic choice of the recomputation (the fastest plan that
 * fits, compared with each choice forced).
 */
#include <unistd.h>

#include "gpt_fixture.h"

#include "shard/strategy/strategy_problem.h"
#include "shard/strategy/strategy_milp.h"

static pb_graph *gpt(int fp16)
{
	pb_gpt_spec s;
	pb_gpt_spec_default(&s);
	s.layers = 4;
	s.hidden = 128;
	s.heads = 4;
	s.seq = 64;
	s.vocab = 1000;
	s.batch = 8;
	s.fp16 = fp16;
	return pb_test_gpt_load(&s, 0);
}

static pb_shard_problem *build(const pb_graph *g, const pb_cluster *c, const char *scheme,
                               int optimizer, int zero, int recompute)
{
	pb_mesh m;
	pb_error err = {0};
	assert_int_equal(pb_cluster_mesh_parse(&m, c, scheme, &err), PB_OK);
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	o.train = 1;
	o.optimizer = optimizer;
	o.zero = zero;
	o.recompute = recompute;
	pb_shard_problem *p = NULL;
	assert_int_equal(pb_strategy_problem_build(g, c, &m, &o, &p, &err), PB_OK);
	return p;
}

static void load_cluster(pb_cluster *c)
{
	pb_test_cluster_file("layouts/cluster-1x8.lua", c);
}

static void test_param_factor(void **state)
{
	(void)state;
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	o.optimizer = PB_OPTIM_ADAM;
	/* fp16: 2 + 2 + 4 (master) + 4 + 4 = 16 bytes per 2-byte parameter */
	assert_true(fabs(pb_strategy_problem_train_param_factor(&o, 2, 1) - 8) < 1e-12);
	/* fp32: 4 + 4 + 4 + 4 = 16 bytes per 4-byte parameter */
	assert_true(fabs(pb_strategy_problem_train_param_factor(&o, 4, 1) - 4) < 1e-12);
	o.zero = 1; /* the 12 bytes of state over 8 replicas */
	assert_true(fabs(pb_strategy_problem_train_param_factor(&o, 2, 8) - (2 + 6.0 / 8)) < 1e-12);
	o.zero = 2;
	assert_true(fabs(pb_strategy_problem_train_param_factor(&o, 2, 8) - (1 + 7.0 / 8)) < 1e-12);
	o.zero = 3; /* everything over 8: 16 / 8 bytes per parameter */
	assert_true(fabs(pb_strategy_problem_train_param_factor(&o, 2, 8) - 1) < 1e-12);
	o.optimizer = PB_OPTIM_NONE;
	o.zero = 0;
	assert_true(fabs(pb_strategy_problem_train_param_factor(&o, 2, 8) - 2) < 1e-12);
}

/* Replicas of a node's input i under strategy s. */
static double replicas(const pb_shard_problem *p, const pb_strat *st, int i)
{
	double r = 1;
	for (int a = 0; a < p->mesh.n_axes; a++)
		if (st->in[i][a] == PB_SPEC_R)
			r *= p->mesh.size[a];
	return r;
}

static void test_adam_zero_and_shared(void **state)
{
	(void)state;
	pb_cluster c;
	load_cluster(&c);
	pb_graph *g = gpt(1);
	pb_shard_problem *none = build(g, &c, "2x4", PB_OPTIM_NONE, 0, PB_RECOMP_NONE);
	pb_shard_problem *adam = build(g, &c, "2x4", PB_OPTIM_ADAM, 0, PB_RECOMP_NONE);
	pb_shard_problem *z1 = build(g, &c, "2x4", PB_OPTIM_ADAM, 1, PB_RECOMP_NONE);
	pb_shard_problem *z3 = build(g, &c, "2x4", PB_OPTIM_ADAM, 3, PB_RECOMP_NONE);
	int v = pb_graph_find_node(g, "h1.mlp.fc.matmul");
	const pb_shard_node *a = &none->nodes[v], *b = &adam->nodes[v], *c1 = &z1->nodes[v],
	                    *c3 = &z3->nodes[v];
	assert_int_equal(a->n_strat, b->n_strat);
	int seen_rep = 0, seen_split = 0;
	for (int s = 0; s < a->n_strat; s++) {
		double local = a->mem_param[s] / 2; /* weights + gradients */
		assert_true(local > 0);
		double r = replicas(none, &a->strat[s], 1);
		seen_rep |= r == 8;
		seen_split |= r == 1;
		assert_true(fabs(b->mem_param[s] - 8 * local) <= 1e-9 * local);
		assert_true(fabs(c1->mem_param[s] - (2 + 6 / r) * local) <= 1e-9 * local);
		assert_true(fabs(c3->mem_param[s] - 8 / r * local) <= 1e-9 * local);
		/* ZeRO-3 gathers the weights: never cheaper than ZeRO-1 */
		assert_true(c3->cost[s] >= c1->cost[s] - 1e-15);
		if (r > 1)
			assert_true(c3->cost[s] > c1->cost[s]);
	}
	assert_true(seen_rep && seen_split);
	/* the tied embedding: held by the Gather, not again by the head */
	int wte = pb_graph_find_tensor(g, "wte");
	int emb = pb_graph_find_node(g, "embed.tokens"), head = pb_graph_find_node(g, "lm_head");
	assert_int_equal(adam->param_owner[wte], emb);
	for (int s = 0; s < adam->nodes[head].n_strat; s++)
		assert_true(adam->nodes[head].mem_param[s] == 0);
	for (int s = 0; s < adam->nodes[emb].n_strat; s++)
		assert_true(adam->nodes[emb].mem_param[s] > 0);
	/* ... and the head, whose layout of it may differ from the Gather's,
	 * pays the resharding from it: an edge from the owner, free where the
	 * layouts agree (before, a head replicating a split embedding paid
	 * nothing, while the report charged its gradient all-reduce) */
	int found = 0;
	for (int e = 0; e < adam->n_edges; e++) {
		const pb_shard_edge *ed = &adam->edges[e];
		if (ed->tensor != wte)
			continue;
		found++;
		assert_int_equal(ed->prod, emb);
		assert_int_equal(ed->cons, head);
		double lo = INFINITY, hi = 0;
		for (int k = 0; k < ed->na * ed->nb; k++) {
			lo = fmin(lo, ed->cost[k]);
			hi = fmax(hi, ed->cost[k]);
		}
		assert_true(lo == 0 && hi > 0);
	}
	assert_int_equal(found, 1);
	pb_strategy_problem_free(none);
	pb_strategy_problem_free(adam);
	pb_strategy_problem_free(z1);
	pb_strategy_problem_free(z3);
	pb_graph_free(g);
	pb_cluster_free(&c);
}

static void test_recompute(void **state)
{
	(void)state;
	pb_cluster c;
	load_cluster(&c);
	pb_graph *g = gpt(0);
	pb_shard_problem *p0 = build(g, &c, "8", PB_OPTIM_ADAM, 0, PB_RECOMP_NONE);
	pb_shard_problem *ps = build(g, &c, "8", PB_OPTIM_ADAM, 0, PB_RECOMP_SELECTIVE);
	pb_shard_problem *pf = build(g, &c, "8", PB_OPTIM_ADAM, 0, PB_RECOMP_FULL);
	const char *core[] = {"h1.attn.scores", "h1.attn.scale", "h1.attn.softmax",
	                      "h1.attn.context"};
	for (int i = 0; i < 4; i++) {
		int v = pb_graph_find_node(g, core[i]);
		assert_true(ps->nodes[v].recomputed);
		for (int s = 0; s < ps->nodes[v].n_strat; s++) {
			assert_true(ps->nodes[v].mem_act[s] == 0);
			/* without recomputation only the softmax output of the core is
			 * stored (act_saved.h: the scores feed a product with a constant,
			 * the scaled scores the softmax, whose gradient reads its output,
			 * the context a transpose) */
			if (i == 2)
				assert_true(p0->nodes[v].mem_act[s] > 0);
			else
				assert_true(p0->nodes[v].mem_act[s] == 0);
			/* one more forward pass: 4/3 of forward + backward */
			assert_true(
			    fabs(ps->nodes[v].flops_part[s] - p0->nodes[v].flops_part[s] * 4 / 3) <=
			    1e-9 * p0->nodes[v].flops_part[s]);
		}
	}
	int q = pb_graph_find_node(g, "h1.attn.q.matmul");
	assert_false(ps->nodes[q].recomputed);
	assert_true(ps->nodes[q].mem_act[0] == p0->nodes[q].mem_act[0]);
	/* full: block boundaries and the first block keep their outputs */
	int gelu3 = pb_graph_find_node(g, "h2.mlp.gelu"),
	    gelu0 = pb_graph_find_node(g, "h0.mlp.gelu");
	int res3 = pb_graph_find_node(g, "h2.residual_2"), head = pb_graph_find_node(g, "lm_head");
	assert_true(pf->nodes[gelu3].recomputed && pf->nodes[gelu3].mem_act[0] == 0);
	/* the first block is the working block: held once, with the weights */
	assert_true(pf->nodes[gelu0].kept_full == 2 && pf->nodes[gelu0].mem_act[0] == 0 &&
	            pf->nodes[gelu0].mem_param[0] > 0);
	assert_true(pf->nodes[res3].mem_act[0] > 0);
	assert_false(pf->nodes[head].recomputed);
	assert_true(pf->nodes[q].flops_part[0] > p0->nodes[q].flops_part[0]);
	double act[3] = {0, 0, 0};
	pb_shard_problem *ps3[3] = {p0, ps, pf};
	for (int k = 0; k < 3; k++)
		for (int i = 0; i < g->n_nodes; i++)
			if (ps3[k]->nodes[i].active)
				act[k] += ps3[k]->nodes[i].mem_act[0];
	assert_true(act[0] > act[1] && act[1] > act[2]);
	pb_strategy_problem_free(p0);
	pb_strategy_problem_free(ps);
	pb_strategy_problem_free(pf);
	pb_graph_free(g);
	pb_cluster_free(&c);
}

/* --recompute auto keeps the fastest plan that fits among the three. */
static void test_recompute_auto(void **state)
{
	(void)state;
	char model[] = "/tmp/pb_shmem_XXXXXX", lay[] = "/tmp/pb_shmem_lay_XXXXXX";
	int fd = mkstemp(model);
	close(fd);
	fd = mkstemp(lay);
	FILE *f = fdopen(fd, "w");
	fputs("return { kind='cluster', name='tight', nodes=1, devices_per_node=8,\n"
	      "device_memory_gb=0.4, device_tflops=100, intra_bw_gbs=150, intra_latency_us=5 }\n",
	      f);
	fclose(f);
	char lua[64];
	snprintf(lua, sizeof lua, "%s.lua", lay);
	assert_int_equal(rename(lay, lua), 0);
	pb_session *s = pb_session_new();
	char line[512];
	snprintf(line, sizeof line,
	         "gen gpt --layers 6 --hidden 512 --heads 8 --seq 512 --vocab 8000 -o %s.onnx",
	         model);
	int rc;
	free(pb_test_run_cmd(s, line, &rc));
	assert_int_equal(rc, PB_OK);
	double t[3];
	int fit[3];
	const char *names[3] = {"none", "selective", "full"};
	for (int k = 0; k < 3; k++) {
		snprintf(line, sizeof line,
		         "shard %s.onnx --layout %s --train --batch 16 --scheme 2x4 --recompute %s "
		         "--seq-parallel off --dist-opt off --json",
		         model, lua, names[k]);
		json_t *j = pb_test_run_json(s, line);
		t[k] = json_number_value(json_object_get(j, "step_time"));
		fit[k] = json_is_true(json_object_get(j, "feasible"));
		json_decref(j);
	}
	snprintf(line, sizeof line,
	         "shard %s.onnx --layout %s --train --batch 16 --scheme 2x4 --seq-parallel off "
	         "--dist-opt off --json",
	         model, lua);
	json_t *j = pb_test_run_json(s, line);
	int best = -1;
	for (int k = 0; k < 3; k++)
		if (fit[k] && (best < 0 || t[k] < t[best]))
			best = k;
	assert_true(best >= 0);
	assert_false(fit[0]); /* the layout is tight: without recomputation it does not fit */
	assert_string_equal(json_string_value(json_object_get(j, "recompute")), names[best]);
	assert_true(fabs(json_number_value(json_object_get(j, "step_time")) - t[best]) <=
	            1e-9 * t[best]);
	assert_string_equal(json_string_value(json_object_get(j, "optimizer")), "adam");
	json_decref(j);
	pb_session_free(s);
	snprintf(line, sizeof line, "%s.onnx", model);
	unlink(line);
	unlink(model);
	unlink(lua);
}

/* What lets --recompute auto skip MILPs (search_rows.c): the least memory
 * of any plan is exact in training (attained by a plan, never undercut), a
 * recomputation only adds cost to the same problem, a cutoff below the
 * optimum stops the solve and one above it changes nothing, and a plan that
 * fits with room to spare is marked free of the memory limit. */
static void test_skip_bounds(void **state)
{
	(void)state;
	pb_cluster c;
	load_cluster(&c);
	pb_graph *g = gpt(0);
	pb_shard_problem *p0 = build(g, &c, "2x4", PB_OPTIM_ADAM, 0, PB_RECOMP_NONE);
	pb_shard_problem *pf = build(g, &c, "2x4", PB_OPTIM_ADAM, 0, PB_RECOMP_FULL);
	double mm = pb_strategy_problem_min_memory(p0);
	int *ch = calloc((size_t)p0->n_groups + 1, sizeof *ch);
	for (int G = 0; G < p0->n_groups; G++) { /* the least memory per class of tied groups */
		if (p0->groups[G].tie >= 0)
			continue;
		double best = INFINITY;
		for (int s = 0; s < p0->groups[G].n_strat; s++) {
			double m = 0;
			for (int H = 0; H < p0->n_groups; H++)
				if (H == G || p0->groups[H].tie == G)
					m += p0->groups[H].mem_param[s] +
					     p0->act_mult * p0->groups[H].mem_act[s];
			if (m < best) {
				best = m;
				ch[G] = s;
			}
		}
	}
	for (int G = 0; G < p0->n_groups; G++)
		if (p0->groups[G].tie >= 0)
			ch[G] = ch[p0->groups[G].tie];
	pb_shard_result e;
	pb_strategy_problem_evaluate(p0, ch, &e);
	assert_true(fabs(e.memory - mm) <= 1e-9 * mm);
	for (int trial = 0; trial < 50; trial++) { /* no plan below it */
		for (int G = 0; G < p0->n_groups; G++)
			ch[G] = p0->groups[G].tie >= 0
			            ? ch[p0->groups[G].tie]
			            : (G * 7 + trial * 13) % p0->groups[G].n_strat;
		pb_strategy_problem_evaluate(p0, ch, &e);
		assert_true(e.memory >= mm * (1 - 1e-12));
	}
	free(ch);
	assert_true(pb_strategy_problem_costlier(p0, p0));
	assert_true(pb_strategy_problem_costlier(p0, pf));
	assert_false(pb_strategy_problem_costlier(pf, p0));
	pb_error err = {0};
	pb_shard_result r, rc, rl;
	assert_int_equal(pb_strategy_milp_solve(p0, NULL, NULL, NULL, &r, &err), PB_OK);
	assert_true(r.feasible && r.optimal && !r.cut);
	assert_true(r.mem_free); /* 40 GB per device: far from binding */
	p0->cutoff = r.objective * 0.999;
	assert_int_equal(pb_strategy_milp_solve(p0, NULL, NULL, NULL, &rc, &err), PB_OK);
	assert_true(rc.cut && rc.choice == NULL);
	p0->cutoff = r.objective * 1.001;
	assert_int_equal(pb_strategy_milp_solve(p0, NULL, NULL, NULL, &rl, &err), PB_OK);
	assert_false(rl.cut);
	assert_true(rl.objective == r.objective);
	assert_memory_equal(rl.choice, r.choice, (size_t)p0->n_groups * sizeof(int));
	double free_obj = r.objective;
	pb_strategy_problem_result_free(&r);
	pb_strategy_problem_result_free(&rc);
	pb_strategy_problem_result_free(&rl);
	/* a limit just above the least memory binds: not free of it */
	p0->cutoff = 0;
	p0->cl.memory = mm * 1.0001;
	assert_int_equal(pb_strategy_milp_solve(p0, NULL, NULL, NULL, &r, &err), PB_OK);
	assert_true(r.feasible);
	assert_false(r.mem_free || r.unc_opt);
	assert_true(r.objective >= free_obj);
	pb_strategy_problem_result_free(&r);
	/* below it nothing fits: the plan ignoring memory, the free optimum */
	p0->cl.memory = mm * 0.999;
	assert_int_equal(pb_strategy_milp_solve(p0, NULL, NULL, NULL, &r, &err), PB_OK);
	assert_false(r.feasible || r.mem_free);
	assert_true(r.unc_opt);
	assert_true(fabs(r.objective - free_obj) <= 1e-9 * free_obj);
	pb_strategy_problem_result_free(&r);
	pb_strategy_problem_free(p0);
	pb_strategy_problem_free(pf);
	pb_graph_free(g);
	pb_cluster_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_param_factor), cmocka_unit_test(test_adam_zero_and_shared),
	    cmocka_unit_test(test_recompute),    cmocka_unit_test(test_recompute_auto),
	    cmocka_unit_test(test_skip_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
