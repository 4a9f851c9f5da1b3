/*
 * test_shard_costs.c — cost-model terms of the training search found by
 * Megatron-LM's Table 1 (issue 38; docs/megatron.md), each against figures
 * computed here by hand:
 *   - pipeline point-to-point overlapped with compute (pipeline_p2p.h): the
 *     closed form on hand figures and a dp 1 x tp 1 x pp 2 search of a
 *     small generated decoder with the transfer computed from the layout;
 *   - conversions on the inputs of recomputed operators run three times
 *     (forward, recomputed forward, backward);
 *   - a one-element initializer (the attention scale) is not trained: no
 *     gradient, no all-reduce, no optimizer state;
 *   - the distributed optimizer's gradient synchronisation is a
 *     reduce-scatter and an all-gather, not an all-reduce.
 */
#include "gpt_fixture.h"

#include <unistd.h>

#include "session.h"
#include "shard/act_saved.h"
#include "shard/dtp/dtp.h"
#include "shard/dtp/dtp_search.h"
#include "shard/pipeline/pipeline_p2p.h"
#include "shard/spec.h"
#include "shard/strategy/strategy_grad.h"
#include "shard/strategy/strategy_problem.h"

static int close_to(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-15;
}

/* The closed form on round figures (ms): t = 3 (forward 1, backward 2),
 * P = 4 per micro-batch and boundary (2 each way), m = 4, p = 2. */
static void test_p2p_step_by_hand(void **state)
{
	(void)state;
	double ex;
	/* 1F1B, K = 5 slots. Blocking: 5 x (3 + 4) = 35. Overlapped: the
	 * forward send (2) hides behind the backward pass (2), the gradient
	 * (2) behind the forward pass (1): 1 exposed per slot; the fill and
	 * drain 4: 5 x 3 + 5 x 1 + 4 = 24 */
	assert_true(close_to(pb_pipeline_p2p_step(0, 4, 2, 1, 3, 4, 1.0 / 3, &ex), 35));
	assert_true(close_to(ex, 20));
	assert_true(close_to(pb_pipeline_p2p_step(1, 4, 2, 1, 3, 4, 1.0 / 3, &ex), 24));
	assert_true(close_to(ex, 9));
	/* interleaved V = 2: K = 4.5 slots, 2 transfers each. Blocking: 4.5 x
	 * (3 + 8) = 49.5. Overlapped: a chunk's passes are 0.5 and 1, so 1.5 +
	 * 1 exposed per transfer: 4.5 x 3 + 4.5 x 2 x 2.5 + 4 = 40 */
	assert_true(close_to(pb_pipeline_p2p_step(0, 4, 2, 2, 3, 4, 1.0 / 3, &ex), 49.5));
	assert_true(close_to(pb_pipeline_p2p_step(1, 4, 2, 2, 3, 4, 1.0 / 3, &ex), 40));
	assert_true(close_to(ex, 26.5));
	/* transfers the passes hide entirely: only the fill and drain, 5 x 3 +
	 * 0.5; one stage: nothing to send */
	assert_true(close_to(pb_pipeline_p2p_step(1, 4, 2, 1, 3, 0.5, 1.0 / 3, &ex), 15.5));
	assert_true(close_to(pb_pipeline_p2p_step(1, 4, 1, 1, 3, 0, 1.0 / 3, &ex), 12));
	/* never above the blocking step: with m = 1 the fill and drain alone
	 * ((p - 1) P = 3 x 4) exceed nothing, 4 slots x (3 + 4) = 28 stays */
	assert_true(pb_pipeline_p2p_step(1, 1, 4, 1, 3, 40, 1.0 / 3, &ex) <=
	            pb_pipeline_p2p_step(0, 1, 4, 1, 3, 40, 1.0 / 3, NULL));
}

static char layout_path[64], model_path[64];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int reload(void *ud, long batch, const pb_graph **g, pb_error *err)
{
	pb_session *s = ud;
	int rc = pb_session_set_batch(s, batch, err);
	*g = s->graph;
	return rc;
}

/* One dp 1 x tp 1 x pp 2 row of a 4-layer decoder (hidden 256, seq 64,
 * batch 8, fp16) on two nodes of one device joined by a slow link, m = 4,
 * 1F1B, training without recomputation. */
static pb_dtp_config search_row(pb_session *s, pb_cluster *cl, int overlap)
{
	cl->p2p_overlap = overlap;
	pb_dtp_opts o;
	pb_dtp_search_opts_default(&o);
	o.pipe.batch = 8;
	o.pipe.train = 1;
	o.shard.train = 1;
	o.dp = 1;
	o.tp = 1;
	o.pp = 2;
	o.m = 4;
	o.sched = PB_SCHED_1F1B;
	o.v = 0;
	o.pipe.reload = reload;
	o.pipe.reload_ud = s;
	pb_dtp_result r;
	pb_error err = {0};
	int rc = pb_dtp_search(s->graph, cl, &o, &r, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	assert_int_equal(r.n, 1);
	pb_dtp_config c = r.cfg[0];
	assert_true(c.ok);
	pb_dtp_search_result_free(&r);
	return c;
}

static void test_p2p_overlap_search(void **state)
{
	(void)state;
	pb_gpt_spec sp;
	pb_gpt_spec_default(&sp);
	sp.layers = 4;
	sp.hidden = 256;
	sp.heads = 4;
	sp.seq = 64;
	sp.vocab = 1000;
	sp.fp16 = 1;
	sp.batch = 8;
	pb_error err = {0};
	snprintf(model_path, sizeof model_path, "/tmp/pb_test_costs_%d.onnx", (int)getpid());
	snprintf(layout_path, sizeof layout_path, "/tmp/pb_test_costs_%d.lua", (int)getpid());
	assert_int_equal(pb_gen_gpt_write(&sp, model_path, &err), PB_OK);
	/* 0.1 GB/s between the nodes: a transfer of the order of a stage, partly
	 * hidden (half of it longer than the forward pass, shorter than the
	 * backward) */
	write_file(layout_path, "return { kind = 'cluster', nodes = 2, devices_per_node = 1, "
	                        "device_memory_gb = 40, device_tflops = 1, intra_bw_gbs = 100, "
	                        "inter_bw_gbs = 0.1, inter_latency_us = 20 }");
	pb_session *s = pb_session_new();
	assert_int_equal(pb_session_open_model(s, model_path, NULL, 0, &err), PB_OK);
	assert_int_equal(pb_session_open_layout(s, layout_path, &err), PB_OK);
	pb_cluster cl;
	assert_int_equal(pb_cluster_from_hw(s->hw, &cl, &err), PB_OK);
	assert_int_equal(cl.p2p_overlap, 1); /* a layout's default */
	pb_dtp_config off = search_row(s, &cl, 0), on = search_row(s, &cl, 1);
	/* the boundary: one micro-batch (8 / 4 = 2 sequences) of the block
	 * output [2, 64, 256] fp16, forward and its gradient back, over the
	 * 0.1 GB/s link after its 20 us latency */
	double bytes = 2.0 * 64 * 256 * 2, P = 20e-6 + 2 * bytes / 0.1e9;
	assert_true(close_to(off.p2p, P));
	assert_true(close_to(on.p2p, P));
	double t = on.slowest, K = 4 + 2 - 1, f = t / 3, b = 2 * t / 3, h = P / 2;
	assert_true(close_to(off.slowest, t));
	assert_true(close_to(off.step_time, K * (t + P) + off.grad_exposed));
	double e = fmax(0, h - b) + fmax(0, h - f);
	assert_true(h > f && h < b); /* the regime the layout was chosen for */
	double want = fmin(K * t + K * e + P, K * (t + P)) + on.grad_exposed;
	printf("t %.6g s, P %.6g s: blocking %.6g s, overlapped %.6g s (by hand %.6g s)\n", t, P,
	       off.step_time, on.step_time, want);
	assert_true(close_to(on.step_time, want));
	assert_true(on.step_time < off.step_time);
	assert_true(close_to(on.p2p_exposed, fmin(K * e + P, K * P)));
	pb_cluster_free(&cl);
	pb_session_free(s);
	unlink(model_path);
	unlink(layout_path);
}

/* A problem of the decoder of 3 layers (hidden 96, 4 heads, seq 64, fp16)
 * on t devices of one node (150 GB/s, 5 us), training with Adam. */
static pb_shard_problem *problem_sp(pb_graph *g, pb_cluster *cl, int t, int recompute, int zero,
                                    int seqpar)
{
	char text[300];
	snprintf(text, sizeof text,
	         "return { kind = 'cluster', nodes = 1, devices_per_node = %d, "
	         "device_memory_gb = 80, device_tflops = 100, intra_bw_gbs = 150, "
	         "intra_latency_us = 5 }",
	         t);
	pb_hw *hw = NULL;
	pb_error err = {0};
	assert_int_equal(pb_hw_load_string(text, "tp.lua", &hw, &err), PB_OK);
	assert_int_equal(pb_cluster_from_hw(hw, cl, &err), PB_OK);
	pb_hw_free(hw);
	pb_mesh m;
	char scheme[8];
	snprintf(scheme, sizeof scheme, "%d", t);
	assert_int_equal(pb_cluster_mesh_parse(&m, cl, scheme, &err), PB_OK);
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	o.train = 1;
	o.optimizer = PB_OPTIM_ADAM;
	o.recompute = recompute;
	o.zero = zero;
	o.seq_parallel = seqpar;
	o.no_shrink = 1;
	pb_shard_problem *p = NULL;
	assert_int_equal(pb_strategy_problem_build(g, cl, &m, &o, &p, &err), PB_OK);
	return p;
}

static pb_shard_problem *problem(pb_graph *g, pb_cluster *cl, int t, int recompute, int zero)
{
	return problem_sp(g, cl, t, recompute, zero, PB_SEQPAR_OFF);
}

static pb_graph *decoder(void)
{
	pb_gpt_spec s;
	pb_gpt_spec_default(&s);
	s.layers = 3;
	s.hidden = 96;
	s.heads = 4;
	s.seq = 64;
	s.vocab = 500;
	s.fp16 = 1;
	return pb_test_gpt_load(&s, 1);
}

/* Full recomputation reruns every layer's forward pass, its conversions
 * too: 3 passes on the edges into recomputed operators, 2 elsewhere;
 * selective only on the attention core's. */
static void test_recompute_conversions(void **state)
{
	(void)state;
	pb_graph *g = decoder();
	int proj = pb_graph_find_node(g, "h1.attn.proj.matmul"),
	    sm = pb_graph_find_node(g, "h1.attn.softmax"), head = -1;
	for (int v = 0; v < g->n_nodes; v++)
		if (strstr(g->nodes[v].name, "lm_head") || strstr(g->nodes[v].name, "logits"))
			head = v;
	assert_true(proj >= 0 && sm >= 0 && head >= 0);
	pb_cluster cl;
	const int modes[3] = {PB_RECOMP_NONE, PB_RECOMP_SELECTIVE, PB_RECOMP_FULL};
	const double want_proj[3] = {2, 2, 3}, want_sm[3] = {2, 3, 3};
	for (int k = 0; k < 3; k++) {
		pb_shard_problem *p = problem(g, &cl, 2, modes[k], 0);
		assert_true(pb_strategy_problem_comm_mult(p, proj) == want_proj[k]);
		assert_true(pb_strategy_problem_comm_mult(p, sm) == want_sm[k]);
		assert_true(pb_strategy_problem_comm_mult(p, head) == 2); /* not in a layer */
		int n3 = 0;
		for (int e = 0; e < p->n_edges; e++) {
			const pb_shard_edge *ed = &p->edges[e];
			assert_true(ed->mult == (p->nodes[ed->cons].recomputed ? 3 : 2));
			n3 += ed->mult == 3;
		}
		assert_true(k < 2 || n3 > 0);
		pb_strategy_problem_free(p);
		pb_cluster_free(&cl);
	}
	pb_graph_free(g);
}

/* `gen gpt`'s attn_scale (one fp16 value, 1/sqrt(d)) is held: 2 bytes,
 * with no gradient (2 more) nor Adam state (12 more), and no all-reduce;
 * a weight next to it keeps all three. */
static void test_scalar_not_trained(void **state)
{
	(void)state;
	pb_graph *g = decoder();
	int scale = pb_graph_find_node(g, "h0.attn.scale");
	int ln = pb_graph_find_node(g, "h0.ln_1");
	assert_true(scale >= 0 && ln >= 0);
	pb_cluster cl;
	pb_shard_problem *p = problem(g, &cl, 2, PB_RECOMP_NONE, 0);
	int t_scale = -1;
	for (int i = 0; i < g->nodes[scale].n_inputs; i++) {
		int t = g->nodes[scale].inputs[i];
		if (t >= 0 && g->tensors[t].is_initializer)
			t_scale = t;
	}
	assert_true(t_scale >= 0 && pb_tensor_numel(&g->tensors[t_scale]) == 1);
	assert_int_equal(p->param_owner[t_scale], scale);
	assert_false(pb_strategy_problem_trainable(p, t_scale));
	const pb_shard_node *sn = &p->nodes[scale];
	for (int s = 0; s < sn->n_strat; s++) {
		assert_true(sn->mem_param[s] == 2);
		assert_true(pb_strategy_grad_collectives(p, &sn->strat[s], scale, NULL, 1) == 0);
	}
	/* the layer norm's weight and bias, 96 fp16 values each, replicated on
	 * both devices: 2 + 2 + 12 bytes per value */
	const pb_shard_node *sl = &p->nodes[ln];
	int rep = -1;
	for (int s = 0; s < sl->n_strat && rep < 0; s++)
		if (sl->strat[s].in[1][0] == PB_SPEC_R && sl->strat[s].in[2][0] == PB_SPEC_R)
			rep = s;
	assert_true(rep >= 0);
	assert_true(close_to(sl->mem_param[rep], 2 * 96 * (2 + 2 + 12)));
	pb_strategy_problem_free(p);
	pb_cluster_free(&cl);
	pb_graph_free(g);
}

/* The gradient synchronisation of a replicated weight (h0.mlp.fc, 96 x 384
 * fp16 = 73,728 B) on 2 devices: an all-reduce, 5 us + 2 x 1/2 x 73,728 B /
 * 150 GB/s; with the distributed optimizer (ZeRO-1) a reduce-scatter and an
 * all-gather, 1/2 x 73,728 B / 150 GB/s each and the 5 us shared. */
static void test_dist_opt_collectives(void **state)
{
	(void)state;
	pb_graph *g = decoder();
	int fc = pb_graph_find_node(g, "h0.mlp.fc.matmul");
	assert_true(fc >= 0);
	const double B = 96.0 * 384 * 2, half = 0.5 * B / 150e9, lat = 5e-6;
	for (int zero = 0; zero <= 1; zero++) {
		pb_cluster cl;
		pb_shard_problem *p = problem(g, &cl, 2, PB_RECOMP_NONE, zero);
		const pb_shard_node *sn = &p->nodes[fc];
		int rep = -1;
		for (int s = 0; s < sn->n_strat && rep < 0; s++)
			if (sn->strat[s].in[1][0] == PB_SPEC_R)
				rep = s;
		assert_true(rep >= 0);
		json_t *arr = json_array();
		double tm = pb_strategy_grad_collectives(p, &sn->strat[rep], fc, arr, 1);
		assert_true(close_to(tm, lat + 2 * half));
		if (zero == 0) {
			assert_int_equal(json_array_size(arr), 1);
			assert_string_equal(
			    json_string_value(json_object_get(json_array_get(arr, 0), "kind")),
			    "all-reduce");
		} else {
			assert_int_equal(json_array_size(arr), 2);
			assert_string_equal(
			    json_string_value(json_object_get(json_array_get(arr, 0), "kind")),
			    "reduce-scatter");
			assert_string_equal(
			    json_string_value(json_object_get(json_array_get(arr, 1), "kind")),
			    "all-gather");
			for (int k = 0; k < 2; k++)
				assert_true(close_to(json_real_value(json_object_get(
				                         json_array_get(arr, (size_t)k), "time")),
				                     lat / 2 + half));
		}
		json_decref(arr);
		pb_strategy_problem_free(p);
		pb_cluster_free(&cl);
	}
	pb_graph_free(g);
}

/* Sequence parallelism divides the work of the operators it splits: the
 * layer norm h0.ln_2 and the residual add h0.residual_1, replicated over 2
 * devices, each run on half of the sequence (Korthikanti et al. 2022,
 * section 4.2.2). By hand: training, 3 x the node's FLOPs at 100 TFLOP/s
 * (the layout has no memory bandwidth: no roofline), over 2 with it; a
 * product with weights (h0.mlp.fc) is not divided. */
static void test_seq_parallel_compute(void **state)
{
	(void)state;
	pb_graph *g = decoder();
	const char *names[3] = {"h0.ln_2", "h0.residual_1", "h0.mlp.fc.matmul"};
	pb_cluster c0, c1;
	pb_shard_problem *off = problem_sp(g, &c0, 2, PB_RECOMP_NONE, 0, PB_SEQPAR_OFF);
	pb_shard_problem *on = problem_sp(g, &c1, 2, PB_RECOMP_NONE, 0, PB_SEQPAR_ON);
	for (int k = 0; k < 3; k++) {
		int v = pb_graph_find_node(g, names[k]);
		assert_true(v >= 0);
		double by_hand = 3 * pb_strategy_problem_node_flops(g, &g->nodes[v]) / 100e12;
		assert_true(by_hand > 0);
		const pb_shard_node *a = &off->nodes[v], *b = &on->nodes[v];
		assert_int_equal(a->n_strat, b->n_strat);
		int seen = 0;
		for (int s = 0; s < a->n_strat; s++) {
			if (a->strat[s].out[0][0] != PB_SPEC_R || a->strat[s].pad != 1)
				continue;
			seen = 1;
			assert_true(close_to(a->flops_part[s], by_hand));
			assert_true(close_to(b->flops_part[s], k < 2 ? by_hand / 2 : by_hand));
		}
		assert_true(seen);
	}
	pb_strategy_problem_free(off);
	pb_strategy_problem_free(on);
	pb_cluster_free(&c0);
	pb_cluster_free(&c1);
	pb_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_p2p_step_by_hand),
	    cmocka_unit_test(test_p2p_overlap_search),
	    cmocka_unit_test(test_recompute_conversions),
	    cmocka_unit_test(test_scalar_not_trained),
	    cmocka_unit_test(test_dist_opt_collectives),
	    cmocka_unit_test(test_seq_parallel_compute),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
