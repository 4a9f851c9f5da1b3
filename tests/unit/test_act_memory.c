/*
 * test_act_memory.c — activation memory per decoder layer in training
 * against Korthikanti et al. 2022, "Reducing Activation Recomputation in
 * Large Transformer Models" (section 4 and Table 2), computed here by hand
 * (docs/shard.md "Training memory", shard/act_saved.h).
 *
 * The paper, per layer, fp16, sequence s, micro-batch b, hidden h, heads a,
 * tensor-parallel size t, with dropout:
 *   tensor parallel:            s b h (10 + 24/t + 5 a s/(h t))
 *   + sequence parallel:        s b h (34/t + 5 a s/(h t))
 *   selective recomputation:    the a s term goes
 *   full recomputation:         2 s b h (the layer's input)
 * Its count, tensor by tensor: layer-norm inputs 2 x 2sbh, the QKV input
 * 2sbh, Q and K 4sbh, softmax output 2as^2b, softmax-dropout mask as^2b and
 * output 2as^2b, V 2sbh, the projection input 2sbh, attention-dropout mask
 * sbh; MLP input 2sbh, GeLU input 8sbh, second GEMM input 8sbh, dropout mask
 * sbh. `gen gpt` has no dropout: the two sbh masks, the softmax-dropout mask
 * and its output go (the attention over values reads the softmax output,
 * already counted), so here:
 *   tensor parallel:            s b h (8 + 24/t) + 2 a s^2 b / t
 *   + sequence parallel:        (32 s b h + 2 a s^2 b) / t
 *   selective:                  s b h (8 + 24/t), 32 s b h / t
 *   full (a layer other than the one being recomputed): 2 s b h, 2 s b h / t
 * The layout is Megatron's (Shoeybi et al. 2019): the Q, K, V and first MLP
 * products split by columns (heads, 4h), the projections by rows (partial
 * sums all-reduced), layer norms and residual additions replicated: each
 * operator of layer h0 takes the strategy of a problem on t devices that
 * matches it, and its mem_act is summed.
 */
#include "gpt_fixture.h"

#include "shard/act_saved.h"
#include "shard/spec.h"
#include "shard/strategy/strategy_problem.h"

enum { S = 64, H = 96, A = 4, L = 3, B = 1 };

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* operators Megatron keeps replicated over the tensor-parallel devices (or
 * partial: the row-parallel products) */
static int replicated_op(const pb_node *n)
{
	return !strcmp(n->op, "LayerNormalization") || strstr(n->name, "residual") ||
	       ends_with(n->name, "proj.matmul") || ends_with(n->name, "proj.add_bias");
}

/* 1 when strategy st lays node n's outputs out as Megatron does on a
 * one-axis mesh: replicated (or partial) operators not split, the others
 * split along a dimension that is neither the batch nor the sequence */
static int megatron_layout(const pb_graph *g, const pb_node *n, const pb_strat *st)
{
	for (int j = 0; j < n->n_outputs && j < PB_SHARD_MAX_OUT; j++) {
		int d = st->out[j][0];
		if (replicated_op(n)) {
			if (d >= 0)
				return 0;
		} else {
			const pb_tensor *t = &g->tensors[n->outputs[j]];
			if (d < 0 || t->dims[d] == S || t->dims[d] == B)
				return 0;
		}
	}
	return 1;
}

/* activation bytes per micro-batch of layer `layer` (nodes "h<layer>.")
 * in Megatron's layout on t devices */
static double layer_act(const pb_graph *g, int t, int recompute, int seqpar, int layer)
{
	char pre[8], text[400];
	snprintf(pre, sizeof pre, "h%d.", layer);
	snprintf(text, sizeof text,
	         "return { kind = 'cluster', nodes = 1, devices_per_node = %d, "
	         "device_memory_gb = 80, device_tflops = 100, intra_bw_gbs = 150 }",
	         t);
	pb_hw *hw = NULL;
	pb_cluster cl;
	pb_error err = {0};
	assert_int_equal(pb_hw_load_string(text, "tp.lua", &hw, &err), PB_OK);
	assert_int_equal(pb_cluster_from_hw(hw, &cl, &err), PB_OK);
	pb_hw_free(hw);
	pb_mesh m;
	char scheme[8];
	snprintf(scheme, sizeof scheme, "%d", t);
	assert_int_equal(pb_cluster_mesh_parse(&m, &cl, scheme, &err), PB_OK);
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	o.train = 1;
	o.optimizer = PB_OPTIM_ADAM;
	o.recompute = recompute;
	o.seq_parallel = seqpar;
	o.no_shrink = 1;
	pb_shard_problem *p = NULL;
	assert_int_equal(pb_strategy_problem_build(g, &cl, &m, &o, &p, &err), PB_OK);
	double sum = 0;
	int nodes = 0;
	for (int v = 0; v < g->n_nodes; v++) {
		const pb_node *n = &g->nodes[v];
		const pb_shard_node *sn = &p->nodes[v];
		if (strncmp(n->name, pre, strlen(pre)) || !sn->active)
			continue;
		int pick = -1;
		for (int s = 0; s < sn->n_strat && pick < 0; s++)
			if (sn->strat[s].pad == 1 && megatron_layout(g, n, &sn->strat[s]))
				pick = s;
		if (pick < 0)
			fail_msg("%s (%s): no strategy in Megatron's layout on %d devices", n->name,
			         n->op, t);
		sum += sn->mem_act[pick];
		nodes++;
	}
	assert_true(nodes >= 20);
	pb_strategy_problem_free(p);
	pb_cluster_free(&cl);
	return sum;
}

static pb_graph *decoder(void)
{
	pb_gpt_spec s;
	pb_gpt_spec_default(&s);
	s.layers = L;
	s.hidden = H;
	s.heads = A;
	s.seq = S;
	s.vocab = 500;
	s.fp16 = 1;
	return pb_test_gpt_load(&s, B);
}

static void check(double got, double want, const char *what, int t)
{
	printf("%-36s t=%d: %.0f B (by hand %.0f B)\n", what, t, got, want);
	assert_true(fabs(got - want) <= 1e-9 * want);
}

static void test_korthikanti_per_layer(void **state)
{
	(void)state;
	pb_graph *g = decoder();
	const double sbh = (double)S * B * H, as2b = (double)A * S * S * B;
	for (int t = 2; t <= 4; t += 2) {
		check(layer_act(g, t, PB_RECOMP_NONE, PB_SEQPAR_OFF, 0),
		      sbh * (8 + 24.0 / t) + 2 * as2b / t, "tensor parallel", t);
		check(layer_act(g, t, PB_RECOMP_NONE, PB_SEQPAR_ON, 0), (32 * sbh + 2 * as2b) / t,
		      "tensor + sequence parallel", t);
		check(layer_act(g, t, PB_RECOMP_SELECTIVE, PB_SEQPAR_OFF, 0), sbh * (8 + 24.0 / t),
		      "tensor parallel, selective", t);
		check(layer_act(g, t, PB_RECOMP_SELECTIVE, PB_SEQPAR_ON, 0), 32 * sbh / t,
		      "tensor + sequence parallel, selective", t);
		/* full: layer 1 (layer 0 is the one recomputed, held once) */
		check(layer_act(g, t, PB_RECOMP_FULL, PB_SEQPAR_OFF, 1), 2 * sbh, "full", t);
		check(layer_act(g, t, PB_RECOMP_FULL, PB_SEQPAR_ON, 1), 2 * sbh / t,
		      "full, sequence parallel", t);
	}
	pb_graph_free(g);
}

/* Which tensors the backward pass needs, named: the products' activation
 * inputs, norms' and GeLU's inputs, the softmax output; not the bias and
 * residual additions, reshapes, transposes, nor the product with the
 * constant attention scale. */
static void test_saved_tensors(void **state)
{
	(void)state;
	pb_graph *g = decoder();
	unsigned char *tk = calloc((size_t)g->n_tensors + 1, 1);
	assert_non_null(tk);
	for (int t = 0; t < g->n_tensors; t++)
		tk[t] = g->tensors[t].producer >= 0    ? PB_TKIND_ACT
		        : g->tensors[t].is_initializer ? PB_TKIND_PARAM
		                                       : PB_TKIND_ACT;
	const char *kept[] = {"h0.ln_1.out",       "h0.attn.q_t.out",     "h0.attn.k_t.out",
	                      "h0.attn.v_t.out",   "h0.attn.softmax.out", "h0.attn.merge.out",
	                      "h0.residual_1.out", "h0.ln_2.out",         "h0.mlp.fc.out",
	                      "h0.mlp.gelu.out",   "h0.residual_2.out"};
	int n_kept = 0;
	for (int v = 0; v < g->n_nodes; v++) {
		const pb_node *n = &g->nodes[v];
		if (strncmp(n->name, "h0.", 3))
			continue;
		unsigned bits = pb_act_saved_outputs(g, tk, v);
		const char *out = g->tensors[n->outputs[0]].name;
		int want = 0;
		for (size_t k = 0; k < sizeof kept / sizeof *kept; k++)
			want |= !strcmp(out, kept[k]);
		if ((int)(bits & 1) != want)
			fail_msg("%s: stored %u, want %d", out, bits & 1, want);
		n_kept += want;
	}
	assert_int_equal(n_kept, 11);
	free(tk);
	pb_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_korthikanti_per_layer),
	    cmocka_unit_test(test_saved_tensors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
