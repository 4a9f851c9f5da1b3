/* test_constant_weights.c — weights stored as Constant nodes (PaddleOCR's
 * exports hold every kernel so) count as parameters like initializers do:
 * a generated ONNX with the same Conv once with initializer weights and once
 * with Constant weights gives the same params and param_bytes in `info
 * --json`, while the scalar Constant, the int64 shape Constant of a Reshape
 * and the float scales of a Resize stay out; the Constant node's output is
 * no activation; and a many-core plan's storage includes those weights. */
#include "pb_test.h"

#include <unistd.h>

#include "pb_onnx_build.h"

/* A float tensor attribute `value` on the last node (inline float_data). */
static void attr_floats(mb *b, int rank, const int64_t *dims)
{
	Onnx__AttributeProto *a =
	    mb_attr(b, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
	Onnx__TensorProto *t = mb_alloc(b, sizeof *t);
	Onnx__TensorProto ti = ONNX__TENSOR_PROTO__INIT;
	*t = ti;
	t->has_data_type = 1;
	t->data_type = PB_DT_FLOAT;
	t->n_dims = (size_t)rank;
	t->dims = mb_alloc(b, (size_t)(rank + 1) * sizeof *t->dims);
	size_t n = 1;
	for (int i = 0; i < rank; i++) {
		t->dims[i] = dims[i];
		n *= (size_t)dims[i];
	}
	t->n_float_data = n;
	t->float_data = mb_alloc(b, n * sizeof *t->float_data);
	for (size_t i = 0; i < n; i++)
		t->float_data[i] = 1.0f + (float)i;
	a->t = t;
}

static void attr_int64s(mb *b, int n, const int64_t *v)
{
	Onnx__AttributeProto *a =
	    mb_attr(b, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
	Onnx__TensorProto *t = mb_alloc(b, sizeof *t);
	Onnx__TensorProto ti = ONNX__TENSOR_PROTO__INIT;
	*t = ti;
	t->has_data_type = 1;
	t->data_type = PB_DT_INT64;
	t->n_dims = 1;
	t->dims = mb_alloc(b, sizeof *t->dims);
	t->dims[0] = n;
	t->n_int64_data = (size_t)n;
	t->int64_data = mb_alloc(b, (size_t)n * sizeof *t->int64_data);
	memcpy(t->int64_data, v, (size_t)n * sizeof *v);
	a->t = t;
}

/* x[1,3,16,16] -> Conv(w 8x3x3x3, b 8) -> Mul(scalar) -> Resize(scales) ->
 * Reshape([1,-1]) -> y. as_constants: w and b are Constant nodes, else
 * initializers. The scalar, the scales and the shape are always Constants. */
static void write_model(const char *path, int as_constants)
{
	mb b;
	mb_init(&b, 13);
	int64_t xd[4] = {1, 3, 16, 16}, wd[4] = {8, 3, 3, 3}, bd[1] = {8}, one[1] = {1};
	int64_t pads[4] = {1, 1, 1, 1}, sd[1] = {4}, shape[2] = {1, -1};
	mb_input(&b, "x", PB_DT_FLOAT, 4, xd, NULL);
	if (as_constants) {
		mb_node(&b, "Constant", "", "w");
		b.last->name = mb_str(&b, "const_w");
		attr_floats(&b, 4, wd);
		mb_node(&b, "Constant", "", "b");
		b.last->name = mb_str(&b, "const_b");
		attr_floats(&b, 1, bd);
	} else {
		mb_weight(&b, "w", 4, wd);
		mb_weight(&b, "b", 1, bd);
	}
	mb_node(&b, "Constant", "", "s");
	b.last->name = mb_str(&b, "const_scalar");
	attr_floats(&b, 0, one);
	mb_node(&b, "Constant", "", "scales");
	b.last->name = mb_str(&b, "const_scales");
	attr_floats(&b, 1, sd);
	mb_node(&b, "Constant", "", "shape");
	b.last->name = mb_str(&b, "const_shape");
	attr_int64s(&b, 2, shape);
	mb_node(&b, "Conv", "x,w,b", "c");
	mb_attr_ints(&b, "pads", 4, pads);
	mb_node(&b, "Mul", "c,s", "m");
	mb_node(&b, "Resize", "m,,scales", "r");
	mb_node(&b, "Reshape", "r,shape", "y");
	mb_output(&b, "y");
	size_t len = onnx__model_proto__get_packed_size(&b.model);
	uint8_t *buf = malloc(len);
	onnx__model_proto__pack(&b.model, buf);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	free(buf);
	mb_free(&b);
}

static json_t *info_json(const char *path)
{
	pb_session *s = pb_session_new();
	char line[512];
	snprintf(line, sizeof line, "info %s --json", path);
	json_t *j = pb_test_run_json(s, line);
	pb_session_free(s);
	return j;
}

static double total(json_t *j, const char *key)
{
	return json_number_value(json_object_get(json_object_get(j, "totals"), key));
}

static json_t *node_named(json_t *j, const char *name)
{
	json_t *nodes = json_object_get(j, "nodes");
	for (size_t i = 0; i < json_array_size(nodes); i++) {
		json_t *n = json_array_get(nodes, i);
		if (strcmp(json_string_value(json_object_get(n, "name")), name) == 0)
			return n;
	}
	return NULL;
}

static void test_constant_weights_count(void **state)
{
	(void)state;
	char pc[] = "/tmp/pb_constw_XXXXXX", pi[] = "/tmp/pb_initw_XXXXXX";
	int fd = mkstemp(pc);
	assert_true(fd >= 0);
	close(fd);
	fd = mkstemp(pi);
	assert_true(fd >= 0);
	close(fd);
	write_model(pc, 1);
	write_model(pi, 0);
	json_t *jc = info_json(pc), *ji = info_json(pi);
	/* The same weights either way: the Constant form is not underestimated. */
	assert_true(total(ji, "params") > 0);
	assert_true(total(jc, "params") == total(ji, "params"));
	assert_true(total(jc, "param_bytes") == total(ji, "param_bytes"));
	/* Only w and b: the scalar, the Resize scales and the shape are not. */
	double conv_params = 0;
	json_t *conv = node_named(jc, "Conv");
	assert_non_null(conv);
	conv_params = json_number_value(json_object_get(conv, "params"));
	assert_true(conv_params == 8 * 3 * 3 * 3 + 8);
	assert_true(total(jc, "params") == conv_params);
	assert_true(total(jc, "param_bytes") == 4 * conv_params);
	/* A weight is no activation: the Constant producing it outputs none. */
	json_t *cw = node_named(jc, "const_w");
	assert_non_null(cw);
	assert_true(json_number_value(json_object_get(cw, "activation_bytes")) == 0);
	json_t *cs = node_named(jc, "const_shape");
	assert_non_null(cs);
	assert_true(json_number_value(json_object_get(cs, "activation_bytes")) > 0);
	json_decref(jc);
	json_decref(ji);
	unlink(pc);
	unlink(pi);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_constant_weights_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
