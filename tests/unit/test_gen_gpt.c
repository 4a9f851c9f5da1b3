/*
 * test_gen_gpt.c — the structure-only GPT generator (core/model/gen_gpt.c):
 * the bytes load through the ONNX reader with every shape inferred, the
 * operator and parameter counts match the formulas of gen_gpt.h counted
 * independently from the loaded tensors, the tied embedding is one tensor
 * with two consumers, --batch changes B, bad sizes are refused.
 */
#include <unistd.h>

#include "gpt_fixture.h"

/* Float initializers counted once each (the embedding table is shared). */
static double float_params(const pb_graph *g)
{
	double n = 0;
	for (int t = 0; t < g->n_tensors; t++)
		if (g->tensors[t].is_initializer && g->tensors[t].dtype != PB_DT_INT64)
			n += (double)pb_tensor_numel(&g->tensors[t]);
	return n;
}

static void test_loads_with_shapes(void **state)
{
	(void)state;
	pb_gpt_spec s;
	pb_gpt_spec_default(&s);
	s.layers = 3;
	s.hidden = 96;
	s.heads = 6;
	s.seq = 32;
	s.vocab = 500;
	s.batch = 2;
	pb_graph *g = pb_test_gpt_load(&s, 0);
	assert_int_equal(g->n_unknown_shapes, 0);
	assert_int_equal(g->n_nodes, pb_gpt_node_count(&s));
	assert_int_equal(g->n_nodes, 3 * 29 + 5);
	/* 3 (12 96^2 + 13 96) + 500 96 + 32 96 + 2 96 + 1 */
	assert_true(fabs(float_params(g) - 386785.0) < 0.5);
	assert_true(fabs(pb_gpt_params(&s) - 386785.0) < 0.5);
	int lg = pb_graph_find_tensor(g, "logits");
	assert_true(lg >= 0);
	assert_int_equal(g->tensors[lg].rank, 2);
	assert_int_equal(g->tensors[lg].dims[0], 2 * 32);
	assert_int_equal(g->tensors[lg].dims[1], 500);
	int wte = pb_graph_find_tensor(g, "wte");
	assert_true(wte >= 0);
	assert_int_equal(g->tensors[wte].n_consumers, 2);
	assert_true(g->tensors[wte].external_data);
	/* attention scores [B, A, S, S] */
	int sc = pb_graph_find_tensor(g, "h1.attn.scores.out");
	assert_true(sc >= 0);
	int64_t want[4] = {2, 6, 32, 32};
	for (int i = 0; i < 4; i++)
		assert_int_equal(g->tensors[sc].dims[i], want[i]);
	/* MACs of one block: 12 B S H^2 (linear) + 2 B S^2 H (attention) */
	double macs = 0;
	for (int i = 0; i < g->n_nodes; i++)
		if (strncmp(g->nodes[i].name, "h2.", 3) == 0)
			macs += g->nodes[i].cost.macs;
	assert_true(fabs(macs - (12.0 * 2 * 32 * 96 * 96 + 2.0 * 2 * 32 * 32 * 96)) < 0.5);
	pb_graph_free(g);
}

static void test_batch_override_and_fp16(void **state)
{
	(void)state;
	pb_gpt_spec s;
	pb_gpt_spec_default(&s);
	s.layers = 1;
	s.hidden = 64;
	s.heads = 4;
	s.seq = 16;
	s.vocab = 100;
	s.fp16 = 1;
	pb_graph *g = pb_test_gpt_load(&s, 5);
	assert_int_equal(g->n_unknown_shapes, 0);
	int lg = pb_graph_find_tensor(g, "logits");
	assert_int_equal(g->tensors[lg].dims[0], 5 * 16);
	int w = pb_graph_find_tensor(g, "h0.mlp.fc.weight");
	assert_int_equal(g->tensors[w].dtype, PB_DT_FLOAT16);
	assert_true(fabs(pb_tensor_bytes(&g->tensors[w]) - 2.0 * 64 * 256) < 0.5);
	pb_graph_free(g);
}

static void test_bad_sizes(void **state)
{
	(void)state;
	pb_gpt_spec s;
	pb_gpt_spec_default(&s);
	s.heads = 7; /* 768 % 7 != 0 */
	pb_error err = {0};
	unsigned char *buf = NULL;
	size_t len = 0;
	assert_int_equal(pb_gen_gpt_bytes(&s, &buf, &len, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "multiple of heads"));
	pb_gpt_spec_default(&s);
	s.layers = 0;
	assert_int_equal(pb_gen_gpt_bytes(&s, &buf, &len, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "layers"));
	assert_null(buf);
}

static void test_command(void **state)
{
	(void)state;
	char path[] = "/tmp/pb_gen_gpt_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	pb_session *s = pb_session_new();
	char line[256];
	snprintf(line, sizeof line,
	         "gen gpt --layers 2 --hidden 32 --heads 2 --seq 8 --vocab 50 -o %s --json", path);
	json_t *j = pb_test_run_json(s, line);
	assert_int_equal(json_integer_value(json_object_get(j, "nodes")), 2 * 29 + 5);
	json_decref(j);
	int rc;
	snprintf(line, sizeof line, "info %s", path);
	char *out = pb_test_run_cmd(s, line, &rc);
	assert_int_equal(rc, PB_OK);
	assert_non_null(strstr(out, "63 nodes"));
	free(out);
	out = pb_test_run_cmd(s, "gen gpt --hidden 100 --heads 3 -o /tmp/x.onnx", &rc);
	assert_int_equal(rc, PB_EINPUT);
	assert_non_null(strstr(out, "multiple of heads"));
	free(out);
	out = pb_test_run_cmd(s, "gen bert -o /tmp/x.onnx", &rc);
	assert_int_equal(rc, PB_EUSAGE);
	free(out);
	pb_session_free(s);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_loads_with_shapes),
	    cmocka_unit_test(test_batch_override_and_fp16),
	    cmocka_unit_test(test_bad_sizes),
	    cmocka_unit_test(test_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
