/* test_onnx_models.c — the bundled models load, every node gets a concrete
 * shape, and total MACs are within 1% of the published figures of
 * models/README (torchvision's "GFLOPS" column, rounded to 0.01 G); plus the
 * loader's errors on malformed files. */
#include "pb_test.h"
#include "load.h"

#include "onnx.pb-c.h"
#include "shape/shape.h"

static const struct {
	const char *file;
	double gmacs;                    /* published, /work/shared/models/README.md */
	double mparams_min, mparams_max; /* sanity range for the parameter count */
} models[] = {
    {"models/resnet18.onnx", 1.81, 11.6, 11.8},      {"models/googlenet.onnx", 1.50, 6.5, 6.7},
    {"models/mobilenet_v2.onnx", 0.30, 3.4, 3.6},    {"models/squeezenet1_1.onnx", 0.35, 1.2, 1.3},
    {"models/densenet121.onnx", 2.83, 7.9, 8.1},     {"models/swin_t.onnx", 4.49, 28.2, 28.7},
    {"models/bert_base_like.onnx", 14.17, 100, 140},
};

static void test_published_macs(void **state)
{
	for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
		pb_graph *g = NULL;
		pb_error err = {0};
		int rc = pb_graph_load(models[i].file, NULL, &g, &err);
		if (rc != PB_OK)
			fail_msg("%s", err.msg);
		double gm = g->total.macs / 1e9;
		printf("%-28s %5d nodes  %.4f G MACs (published %.2f)  %.2f M params  unknown %d\n",
		       models[i].file, g->n_nodes, gm, models[i].gmacs, g->total.params / 1e6,
		       g->n_unknown_shapes);
		assert_true(fabs(gm - models[i].gmacs) <= 0.01 * models[i].gmacs);
		assert_int_equal(g->n_unknown_shapes, 0);
		assert_true(g->total.params / 1e6 >= models[i].mparams_min);
		assert_true(g->total.params / 1e6 <= models[i].mparams_max);
		for (int k = 0; k < g->n_nodes; k++)
			assert_true(g->nodes[k].shape_known);
		pb_graph_free(g);
	}
}

/* Full weights inline give the same structure and costs as the stripped file. */
static void test_inline_weights_same_as_stripped(void **state)
{
	pb_graph *a = NULL, *b = NULL;
	pb_error err = {0};
	assert_int_equal(pb_graph_load("models/squeezenet1_1.onnx", NULL, &a, &err), PB_OK);
	assert_int_equal(pb_graph_load("models/squeezenet1_1-weights.onnx", NULL, &b, &err), PB_OK);
	assert_int_equal(a->n_nodes, b->n_nodes);
	assert_true(a->total.macs == b->total.macs);
	assert_true(a->total.params == b->total.params);
	int ext_a = 0, ext_b = 0;
	for (int t = 0; t < a->n_tensors; t++)
		ext_a += a->tensors[t].external_data;
	for (int t = 0; t < b->n_tensors; t++)
		ext_b += b->tensors[t].external_data;
	assert_true(ext_a > 0);
	assert_int_equal(ext_b, 0);
	pb_graph_free(a);
	pb_graph_free(b);
}

static void test_resnet_structure(void **state)
{
	pb_graph *g = NULL;
	pb_error err = {0};
	assert_int_equal(pb_graph_load("models/resnet18.onnx", NULL, &g, &err), PB_OK);
	assert_int_equal(g->n_inputs, 1);
	assert_int_equal(pb_graph_opset(g, ""), 13);
	char buf[64];
	const pb_tensor *out = &g->tensors[g->outputs[0]];
	assert_string_equal(pb_tensor_shape_str(out, buf, sizeof buf), "1x1000");
	/* The first conv: 1x64x112x112, 64*3*7*7 weights. */
	const pb_node *conv = NULL;
	for (int i = 0; i < g->n_nodes && !conv; i++)
		if (strcmp(g->nodes[i].op, "Conv") == 0)
			conv = &g->nodes[i];
	assert_non_null(conv);
	assert_string_equal(pb_tensor_shape_str(&g->tensors[conv->outputs[0]], buf, sizeof buf),
	                    "1x64x112x112");
	assert_true(conv->cost.macs == 64.0 * 112 * 112 * 3 * 7 * 7);
	assert_true(conv->cost.params == 64 * 3 * 7 * 7 + 64);
	assert_true(conv->cost.out_bytes == 4.0 * 64 * 112 * 112);
	assert_true(conv->cost.in_bytes == 4.0 * 3 * 224 * 224);
	/* torch's Identity nodes forwarding de-duplicated weights: no params, no
	 * activation bytes; the convs reading them count the weights. */
	int identities = 0;
	for (int i = 0; i < g->n_nodes; i++) {
		const pb_node *n = &g->nodes[i];
		if (strcmp(n->op, "Identity") != 0)
			continue;
		identities++;
		assert_true(g->tensors[n->inputs[0]].is_initializer);
		assert_true(n->cost.params == 0 && n->cost.out_bytes == 0 && n->cost.in_bytes == 0);
		const pb_tensor *w = &g->tensors[n->outputs[0]];
		assert_true(w->n_consumers >= 1);
		const pb_node *reader = &g->nodes[w->consumers[0]];
		assert_true(reader->cost.params >= (double)pb_tensor_numel(w));
	}
	assert_int_equal(identities, 16);
	pb_graph_free(g);
}

static void *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	void *buf = malloc((size_t)n);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void expect_error(const void *data, size_t len, const char *needle)
{
	pb_graph *g = NULL;
	pb_error err = {0};
	int rc = pb_onnx_load_buffer(data, len, "bad.onnx", NULL, &g, &err);
	assert_int_equal(rc, PB_EINPUT);
	assert_null(g);
	if (!strstr(err.msg, "bad.onnx") || !strstr(err.msg, needle))
		fail_msg("expected '%s' in: %s", needle, err.msg);
}

static void test_malformed_files(void **state)
{
	size_t len;
	unsigned char *buf = read_all("models/resnet18.onnx", &len);
	expect_error(buf, 0, "empty");
	for (size_t cut = 1; cut < len; cut += len / 7)
		expect_error(buf, cut, "truncated");
	expect_error(buf, len - 1, "truncated");
	const char *text = "graph { node { op_type: \"Relu\" } }";
	expect_error(text, strlen(text), "not an ONNX model");

	/* Valid protobuf without a graph. */
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	m.has_ir_version = 1;
	m.ir_version = 8;
	uint8_t packed[64];
	size_t n = onnx__model_proto__pack(&m, packed);
	expect_error(packed, n, "no graph");

	/* A node without op_type. */
	Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
	Onnx__NodeProto np = ONNX__NODE_PROTO__INIT;
	Onnx__NodeProto *nodes[1] = {&np};
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *oss[1] = {&os};
	os.domain = "";
	os.has_version = 1;
	os.version = 13;
	np.name = "nameless";
	gp.n_node = 1;
	gp.node = nodes;
	m.graph = &gp;
	m.n_opset_import = 1;
	m.opset_import = oss;
	uint8_t big[256];
	n = onnx__model_proto__pack(&m, big);
	expect_error(big, n, "has no op_type");

	/* Raw data of the wrong size. */
	np.op_type = "Relu";
	char *in[1] = {"w"}, *out[1] = {"y"};
	np.n_input = 1;
	np.input = in;
	np.n_output = 1;
	np.output = out;
	Onnx__TensorProto w = ONNX__TENSOR_PROTO__INIT;
	Onnx__TensorProto *inits[1] = {&w};
	int64_t dims[2] = {2, 3};
	float data[5] = {0};
	w.name = "w";
	w.has_data_type = 1;
	w.data_type = PB_DT_FLOAT;
	w.n_dims = 2;
	w.dims = dims;
	w.has_raw_data = 1;
	w.raw_data.len = sizeof data;
	w.raw_data.data = (uint8_t *)data;
	gp.n_initializer = 1;
	gp.initializer = inits;
	n = onnx__model_proto__pack(&m, big);
	expect_error(big, n, "raw_data");

	/* The same model with a correct initializer loads. */
	float ok[6] = {1, 2, 3, 4, 5, 6};
	w.raw_data.len = sizeof ok;
	w.raw_data.data = (uint8_t *)ok;
	n = onnx__model_proto__pack(&m, big);
	pb_graph *g = NULL;
	pb_error err = {0};
	assert_int_equal(pb_onnx_load_buffer(big, n, "ok.onnx", NULL, &g, &err), PB_OK);
	assert_int_equal(g->n_nodes, 1);
	char sbuf[32];
	assert_string_equal(pb_tensor_shape_str(&g->tensors[g->nodes[0].outputs[0]], sbuf, 32),
	                    "2x3");
	const pb_tensor *wt = &g->tensors[pb_graph_find_tensor(g, "w")];
	assert_non_null(wt->value);
	assert_true(wt->value->f[5] == 6.0);
	pb_graph_free(g);
	free(buf);

	/* A missing file. */
	assert_int_equal(pb_onnx_load("/nonexistent/x.onnx", NULL, &g, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "/nonexistent/x.onnx"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_published_macs),
	    cmocka_unit_test(test_inline_weights_same_as_stripped),
	    cmocka_unit_test(test_resnet_structure),
	    cmocka_unit_test(test_malformed_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
