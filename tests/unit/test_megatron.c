/*
 * test_megatron.c — the pieces of the Megatron-LM reproduction
 * (docs/megatron.md): the paper's FLOP count (pb_gpt_train_flops, eq. 3 of
 * Narayanan et al. 2021) against a count of the GEMMs of a generated GPT
 * taken from its loaded shapes; layouts/cluster-a100.lua loaded with another
 * node count (its one parameter); the device_efficiency field of cluster
 * layouts (default 1, bounds, errors naming the field); the
 * device_memory_bw_gbs field and its roofline cost (a memory-bound operator
 * costs its bytes at that bandwidth, a view costs none, a GEMM its FLOPs);
 * full recomputation's working block in a pipeline stage (held once); a
 * pipeline's point-to-point transfer (a tensor once per boundary, scattered
 * over the group and all-gathered over tp: pipeline_p2p.h).
 */
#include "gpt_fixture.h"

#include <unistd.h>

#include "hw.h"
#include "model/gen_gpt.h"
#include "session.h"
#include "shard/dtp/dtp_search.h"
#include "shard/dtp/dtp.h"
#include "shard/cluster.h"
#include "shard/pipeline/pipeline_p2p.h"
#include "shard/pipeline/pipeline_plan.h"
#include "shard/strategy/strategy_problem.h"
#include "util/read_file.h"

static pb_graph *load_gpt(const pb_gpt_spec *s, long batch)
{
	return pb_test_gpt_load(s, batch);
}

/* eq. 3 = 4 x (forward GEMMs of the layers: forward, recomputed forward,
 * backward = 2 x forward) + 3 x (the logits GEMM, not recomputed), the GEMM
 * FLOPs read from the loaded graph (2 m n k from the inferred shapes). */
static void check_flops(long layers, long hidden, long heads, long seq, long vocab, long batch)
{
	pb_gpt_spec s;
	pb_gpt_spec_default(&s);
	s.layers = layers;
	s.hidden = hidden;
	s.heads = heads;
	s.seq = seq;
	s.vocab = vocab;
	s.fp16 = 1;
	pb_graph *g = load_gpt(&s, batch);
	double body = 0, head = 0;
	int matmuls = 0, gemms = 0;
	for (int v = 0; v < g->n_nodes; v++) {
		const pb_node *n = &g->nodes[v];
		if (!strcmp(n->op, "MatMul")) {
			body += pb_strategy_problem_node_flops(g, n);
			matmuls++;
		} else if (!strcmp(n->op, "Gemm")) {
			head += pb_strategy_problem_node_flops(g, n);
			gemms++;
		}
	}
	assert_int_equal(matmuls, 8 * layers); /* Q, K, V, scores, context, out, 2 MLP */
	assert_int_equal(gemms, 1);            /* the tied language-model head */
	double want = pb_gpt_train_flops(&s, (double)batch);
	double got = 4 * body + 3 * head;
	assert_true(fabs(got - want) <= 1e-9 * want);
	pb_graph_free(g);
}

static void test_train_flops_hand_count(void **state)
{
	(void)state;
	check_flops(2, 64, 4, 32, 160, 3);
	check_flops(3, 96, 6, 48, 512, 1);
	/* and the formula itself at the 1 T row of Table 1: 5.13e19 FLOPs per
	 * step (at its aggregate 502.0 PFLOP/s, a step of about 102 s) */
	pb_gpt_spec s;
	pb_gpt_spec_default(&s);
	s.layers = 128;
	s.hidden = 25600;
	s.heads = 160;
	s.seq = 2048;
	s.vocab = 51200;
	double f = pb_gpt_train_flops(&s, 3072);
	double h = 25600, l = 128;
	assert_true(fabs(f - 96 * 3072 * 2048 * l * h * h *
	                         (1 + 2048 / (6 * h) + 51200 / (16 * l * h))) <= 1e-12 * f);
	assert_true(f > 5.12e19 && f < 5.15e19);
}

static char *a100_text(int nodes)
{
	char *text = NULL;
	size_t len = 0;
	pb_error err = {0};
	assert_int_equal(pb_read_file("layouts/cluster-a100.lua", PB_DOOR_LUA, 1 << 20, "layout",
	                              &text, &len, &err),
	                 PB_OK);
	const char *key = "\nlocal nodes = 4\n";
	char *at = strstr(text, key);
	assert_non_null(at);
	char *out = malloc(len + 32);
	int pre = (int)(at - text);
	snprintf(out, len + 32, "%.*s\nlocal nodes = %d\n%s", pre, text, nodes, at + strlen(key));
	free(text);
	return out;
}

static int load_cluster(const char *text, pb_cluster *cl, pb_error *err)
{
	pb_hw *hw = NULL;
	int rc = pb_hw_load_string(text, "a100.lua", &hw, err);
	if (rc == PB_OK)
		rc = pb_cluster_from_hw(hw, cl, err);
	pb_hw_free(hw);
	return rc;
}

static void test_a100_layout_nodes(void **state)
{
	(void)state;
	int counts[] = {4, 48, 315, 384};
	for (int i = 0; i < 4; i++) {
		char *text = a100_text(counts[i]);
		pb_cluster cl;
		pb_error err = {0};
		assert_int_equal(load_cluster(text, &cl, &err), PB_OK);
		assert_int_equal(cl.nodes, counts[i]);
		assert_int_equal(cl.devices_per_node, 8);
		assert_int_equal(cl.n_devices, 8 * counts[i]);
		/* 80 GB, planned to 90% (device_memory_usable's default) */
		assert_true(cl.memory_device == 80e9);
		assert_true(fabs(cl.memory - 72e9) <= 1);
		assert_true(cl.peak_flops == 312e12);
		assert_true(cl.efficiency > 0.3 && cl.efficiency < 0.9);
		assert_true(fabs(cl.flops - 312e12 * cl.efficiency) <= 1e-3);
		assert_true(cl.intra.bw == 246e9 && cl.inter.bw == 25e9);
		assert_true(cl.mem_bw == 2039e9);
		char name[32];
		snprintf(name, sizeof name, "cluster-a100-%d", counts[i]);
		assert_string_equal(cl.name, name);
		pb_cluster_free(&cl);
		free(text);
	}
}

static void test_device_efficiency_field(void **state)
{
	(void)state;
	const char *base = "return { kind = 'cluster', nodes = 1, devices_per_node = 8, "
	                   "device_memory_gb = 40, device_tflops = 100, intra_bw_gbs = 150 %s }";
	char text[512];
	pb_cluster cl;
	pb_error err = {0};
	snprintf(text, sizeof text, base, "");
	assert_int_equal(load_cluster(text, &cl, &err), PB_OK);
	assert_true(cl.efficiency == 1 && cl.flops == 100e12 && cl.peak_flops == 100e12);
	pb_cluster_free(&cl);
	snprintf(text, sizeof text, base, ", device_efficiency = 0.25");
	assert_int_equal(load_cluster(text, &cl, &err), PB_OK);
	assert_true(cl.flops == 25e12 && cl.peak_flops == 100e12);
	pb_cluster_free(&cl);
	const char *bad[] = {", device_efficiency = 0", ", device_efficiency = 1.5",
	                     ", device_efficiency = 'high'"};
	for (int i = 0; i < 3; i++) {
		memset(&err, 0, sizeof err);
		snprintf(text, sizeof text, base, bad[i]);
		assert_int_not_equal(load_cluster(text, &cl, &err), PB_OK);
		assert_non_null(strstr(err.msg, "device_efficiency"));
		assert_non_null(strstr(err.msg, "a100.lua"));
		pb_cluster_free(&cl);
	}
}

/* The unsharded (share 1, no padding) strategy's compute time of the first
 * node with op `op` in a problem on scheme "2". */
static double unsharded_time(const pb_graph *g, const pb_cluster *cl, const char *op,
                             const pb_node **nd)
{
	pb_mesh m;
	pb_error err = {0};
	assert_int_equal(pb_cluster_mesh_parse(&m, cl, "2", &err), PB_OK);
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	pb_shard_problem *p = NULL;
	assert_int_equal(pb_strategy_problem_build(g, cl, &m, &o, &p, &err), PB_OK);
	double t = -1;
	for (int v = 0; v < g->n_nodes && t < 0; v++) {
		const pb_shard_node *sn = &p->nodes[v];
		if (strcmp(g->nodes[v].op, op) || !sn->active)
			continue;
		for (int s = 0; s < sn->n_strat; s++)
			if (sn->strat[s].share == 1 && sn->strat[s].pad == 1)
				t = sn->flops_part[s];
		*nd = &g->nodes[v];
	}
	pb_strategy_problem_free(p);
	assert_true(t >= 0);
	return t;
}

static void test_memory_bandwidth_roofline(void **state)
{
	(void)state;
	pb_gpt_spec s;
	pb_gpt_spec_default(&s);
	s.layers = 2;
	s.hidden = 256;
	s.heads = 4;
	s.seq = 128;
	s.vocab = 1000;
	s.fp16 = 1;
	pb_graph *g = load_gpt(&s, 2);
	const char *base = "return { kind = 'cluster', nodes = 1, devices_per_node = 2, "
	                   "device_memory_gb = 40, device_tflops = 100, intra_bw_gbs = 150 %s }";
	char text[512];
	pb_cluster flat, roof;
	pb_error err = {0};
	snprintf(text, sizeof text, base, "");
	assert_int_equal(load_cluster(text, &flat, &err), PB_OK);
	assert_true(flat.mem_bw == 0);
	snprintf(text, sizeof text, base, ", device_memory_bw_gbs = 1000");
	assert_int_equal(load_cluster(text, &roof, &err), PB_OK);
	assert_true(roof.mem_bw == 1000e9);
	const pb_node *n = NULL;
	/* softmax: a few FLOPs per byte, memory-bound at 1000 GB/s */
	double f0 = unsharded_time(g, &flat, "Softmax", &n);
	double by = n->cost.in_bytes + n->cost.out_bytes + n->cost.param_bytes;
	assert_true(by > 0);
	assert_true(fabs(f0 - pb_strategy_problem_node_flops(g, n) / 100e12) <=
	            1e-12 * (f0 + 1e-30));
	double f1 = unsharded_time(g, &roof, "Softmax", &n);
	assert_true(fabs(f1 - by / 1000e9) <= 1e-9 * f1);
	assert_true(f1 > 10 * f0);
	/* a view moves no bytes: the same time with and without the field */
	assert_true(unsharded_time(g, &flat, "Reshape", &n) ==
	            unsharded_time(g, &roof, "Reshape", &n));
	/* the language-model head's GEMM (hidden 256 x vocab 1000 over 256
	 * tokens) is FLOP-bound at 100 TFLOP/s and 1000 GB/s */
	double h0 = unsharded_time(g, &flat, "Gemm", &n);
	assert_true(unsharded_time(g, &roof, "Gemm", &n) == h0);
	pb_cluster_free(&flat);
	pb_cluster_free(&roof);
	const char *bad[] = {", device_memory_bw_gbs = 0", ", device_memory_bw_gbs = -5",
	                     ", device_memory_bw_gbs = 'fast'"};
	for (int i = 0; i < 3; i++) {
		memset(&err, 0, sizeof err);
		snprintf(text, sizeof text, base, bad[i]);
		assert_int_not_equal(load_cluster(text, &roof, &err), PB_OK);
		assert_non_null(strstr(err.msg, "device_memory_bw_gbs"));
		assert_non_null(strstr(err.msg, "a100.lua"));
		pb_cluster_free(&roof);
	}
	pb_graph_free(g);
}

/* Full recomputation in a pipeline stage (a mask of layers 2-3 of 4): the
 * stage's first layer is its working block, held once (mem_param), its other
 * layers keep only their outputs; as in Megatron-LM, where one layer's
 * activations live while it is recomputed, whatever the micro-batches in
 * flight. */
static void test_stage_working_block(void **state)
{
	(void)state;
	pb_gpt_spec s;
	pb_gpt_spec_default(&s);
	s.layers = 4;
	s.hidden = 256;
	s.heads = 4;
	s.seq = 128;
	s.vocab = 1000;
	s.fp16 = 1;
	pb_graph *g = load_gpt(&s, 2);
	pb_cluster cl;
	pb_error err = {0};
	assert_int_equal(load_cluster("return { kind = 'cluster', nodes = 1, devices_per_node = 2, "
	                              "device_memory_gb = 40, device_tflops = 100, "
	                              "intra_bw_gbs = 150 }",
	                              &cl, &err),
	                 PB_OK);
	unsigned char *mask = calloc((size_t)g->n_nodes, 1);
	for (int v = 0; v < g->n_nodes; v++)
		mask[v] =
		    !strncmp(g->nodes[v].name, "h2.", 3) || !strncmp(g->nodes[v].name, "h3.", 3);
	pb_mesh m;
	assert_int_equal(pb_cluster_mesh_parse(&m, &cl, "2", &err), PB_OK);
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	o.train = 1;
	o.optimizer = PB_OPTIM_ADAM;
	o.recompute = PB_RECOMP_FULL;
	o.mask = mask;
	pb_shard_problem *p = NULL;
	assert_int_equal(pb_strategy_problem_build(g, &cl, &m, &o, &p, &err), PB_OK);
	int gelu2 = pb_graph_find_node(g, "h2.mlp.gelu"),
	    gelu3 = pb_graph_find_node(g, "h3.mlp.gelu");
	int end3 = pb_graph_find_node(g, "h3.residual_2");
	assert_true(gelu2 >= 0 && gelu3 >= 0 && end3 >= 0);
	assert_int_equal(p->nodes[gelu2].kept_full, 2);
	assert_true(p->nodes[gelu2].mem_act[0] == 0 && p->nodes[gelu2].mem_param[0] > 0);
	assert_int_equal(p->nodes[gelu3].kept_full, 0);
	assert_true(p->nodes[gelu3].mem_act[0] == 0 && p->nodes[gelu3].mem_param[0] == 0);
	assert_true(p->nodes[end3].kept_full == 1 && p->nodes[end3].mem_act[0] > 0);
	pb_strategy_problem_free(p);
	free(mask);
	pb_cluster_free(&cl);
	pb_graph_free(g);
}

/* A pipeline's point-to-point transfer (pipeline_p2p.h): the block output
 * crossing a stage boundary is sent once, though two operators of the next
 * stage read it (its layer norm and its residual add), split over the
 * stage's dp x tp devices, and the tp devices of each replica then
 * all-gather the replica's part over NVLink (Megatron-LM's scatter/gather,
 * Narayanan et al. 2021, section 4.1), forward and backward. With tp = 1
 * there is nothing to gather. */
static int reload(void *ud, long batch, const pb_graph **g, pb_error *err)
{
	pb_session *s = ud;
	int rc = pb_session_set_batch(s, batch, err);
	*g = s->graph;
	return rc;
}

static double p2p_of(pb_session *s, const pb_cluster *cl, long B, int dp, int tp, int sched)
{
	pb_dtp_opts o;
	pb_dtp_search_opts_default(&o);
	o.pipe.batch = B;
	o.pipe.train = 1;
	o.shard.train = 1;
	o.dp = dp;
	o.tp = tp;
	o.pp = 2;
	o.m = sched == PB_SCHED_1F1B ? 1 : 2;
	o.sched = sched;
	o.v = sched == PB_SCHED_1F1B ? 0 : 2;
	o.pipe.reload = reload;
	o.pipe.reload_ud = s;
	pb_dtp_result r;
	pb_error err = {0};
	int rc = pb_dtp_search(s->graph, cl, &o, &r, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	assert_int_equal(r.n, 1);
	assert_true(r.cfg[0].ok && r.cfg[0].layers_split);
	double p2p = r.cfg[0].p2p, step = r.cfg[0].step_time, t = r.cfg[0].slowest;
	double V = sched == PB_SCHED_1F1B ? 1 : 2, K = sched == PB_SCHED_1F1B ? o.m + 1 : o.m + 0.5;
	/* the schedule pays V transfers per micro-batch slot */
	assert_true(fabs(step - ((t + V * p2p) * K + r.cfg[0].grad_exposed)) <= 1e-9 * step);
	pb_dtp_search_result_free(&r);
	return p2p;
}

static void test_p2p_scatter_gather(void **state)
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
	char path[64];
	snprintf(path, sizeof path, "/tmp/pb_test_mega_p2p_%d.onnx", (int)getpid());
	pb_error err = {0};
	assert_int_equal(pb_gen_gpt_write(&sp, path, &err), PB_OK);
	pb_session *s = pb_session_new();
	assert_int_equal(pb_session_open_model(s, path, NULL, 0, &err), PB_OK);
	assert_int_equal(pb_session_open_layout(s, "layouts/cluster-1x8.lua", &err), PB_OK);
	pb_cluster cl;
	assert_int_equal(pb_cluster_from_hw(s->hw, &cl, &err), PB_OK);
	cl.p2p_overlap = 0; /* every slot pays its transfers: the formula below */
	long B = pb_pipeline_plan_model_batch(s->graph);
	assert_int_equal(B, 8);
	double bytes = (double)B * 64 * 256 * 2; /* [B, seq, hidden] fp16, once */
	const pb_link *l = &cl.intra;            /* one node */
	double scatter = l->latency + bytes / 4 / l->bw * 2;
	/* dp 1 x tp 4: 1/4 each, then an all-gather of the 3 other quarters */
	double gather = 2 * (l->latency + 0.75 * bytes / l->bw);
	double want = scatter + gather;
	double got = p2p_of(s, &cl, B, 1, 4, PB_SCHED_1F1B);
	assert_true(fabs(got - want) <= 1e-9 * want);
	assert_true(fabs(pb_pipeline_p2p_gather(&cl, 1, 4, bytes, 1) - gather) <= 1e-9 * gather);
	assert_true(fabs(pb_pipeline_p2p_time(&cl, 0, 4, 1, 4, bytes, 1) - want) <= 1e-9 * want);
	/* interleaved: the same transfer, paid V times per slot (checked inside) */
	/* interleaved, m 2: micro-batches of B / 2, half the bytes per transfer,
	 * V = 2 transfers per slot (checked in p2p_of) */
	got = p2p_of(s, &cl, B, 1, 4, PB_SCHED_INTERLEAVED);
	double half =
	    l->latency + bytes / 2 / 4 / l->bw * 2 + 2 * (l->latency + 0.75 * bytes / 2 / l->bw);
	assert_true(fabs(got - half) <= 1e-9 * half);
	/* dp 4 x tp 1: every replica's device holds its whole part, no gather */
	got = p2p_of(s, &cl, B, 4, 1, PB_SCHED_1F1B);
	assert_true(fabs(got - scatter) <= 1e-9 * scatter);
	assert_true(pb_pipeline_p2p_gather(&cl, 4, 1, bytes, 1) == 0);
	/* a tp group larger than a node gathers over the inter-node link */
	pb_cluster big = cl;
	big.devices_per_node = 2;
	double gi = pb_pipeline_p2p_gather(&big, 1, 4, bytes, 0);
	assert_true(fabs(gi - (cl.inter.latency + 0.75 * bytes / cl.inter.bw)) <= 1e-9 * gi);
	pb_cluster_free(&cl);
	pb_session_free(s);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_train_flops_hand_count),
	    cmocka_unit_test(test_a100_layout_nodes),
	    cmocka_unit_test(test_device_efficiency_field),
	    cmocka_unit_test(test_memory_bandwidth_roofline),
	    cmocka_unit_test(test_stage_working_block),
	    cmocka_unit_test(test_p2p_scatter_gather),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
