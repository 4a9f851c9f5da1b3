/* test_onnx_testdata.c — ONNX's own backend node tests (Debian package
 * libonnx-testdata) as an external test suite for the loader and shape
 * inference.
 *
 * For every data/node/<test>/model.onnx:
 *  - the model is loaded from bytes; it must never crash (ASan build too);
 *  - the test's input tensors (test_data_set_0/input_k.pb) become
 *    initializers of the same name, so shape-carrying inputs (Reshape's shape,
 *    Slice's starts, Range's limits, ...) are known as they would be at run
 *    time; the declared output shapes and all value_info are removed first,
 *    so the shapes compared below are really inferred;
 *  - a test is "supported" when every node's operator is claimed by
 *    pb_shape_op_supported() and every output is a tensor; then each inferred
 *    output shape must equal the dims of test_data_set_0/output_k.pb.
 * It prints the counts (models, supported, matching) and the unsupported
 * operators; any mismatch or load failure of a supported test fails.
 *
 * A second pass checks the shape rules without constant propagation doing
 * the work: floating-point inputs stay graph inputs (declared shape, no
 * data), only the other inputs are given as data. Outputs that depend on
 * float data (Resize scales, OneHot depth, Unique, ...) may then stay
 * partly unknown, but a concrete dim that differs from the expected one
 * fails the test. */
#include "pb_test.h"
#include "load.h"

#include <dirent.h>

#include "onnx.pb-c.h"
#include "shape/shape.h"

#define NODE_DIR "/usr/share/libonnx-testdata/data/node"

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	void *buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct {
	char op[64];
	int count;
} op_count;

static void note_op(op_count *ops, int *n_ops, const char *op)
{
	for (int i = 0; i < *n_ops; i++)
		if (strcmp(ops[i].op, op) == 0) {
			ops[i].count++;
			return;
		}
	if (*n_ops < 512) {
		snprintf(ops[*n_ops].op, sizeof ops[*n_ops].op, "%s", op);
		ops[(*n_ops)++].count = 1;
	}
}

static int is_tensor_type(const Onnx__TypeProto *tp)
{
	return tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type;
}

static int is_float_elem(int et)
{
	return et == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ||
	       et == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 ||
	       et == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE ||
	       et == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;
}

/* Returns 1 supported+matching, 0 unsupported, -1 failure (message printed).
 * rules_only: float inputs get no data (second pass); an output with unknown
 * dims that agrees on the known ones then counts in *partial, not as a
 * failure. ops may be NULL (not collected). */
static int run_one(const char *name, int rules_only, op_count *ops, int *n_ops, int *loaded,
                   int *compared, int *partial)
{
	char path[1024];
	size_t len;
	snprintf(path, sizeof path, "%s/%s/model.onnx", NODE_DIR, name);
	void *bytes = slurp(path, &len);
	if (!bytes) {
		printf("  %s: cannot read model.onnx\n", name);
		return -1;
	}
	Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, bytes);
	free(bytes);
	if (!m || !m->graph) {
		printf("  %s: protobuf-c cannot decode model.onnx\n", name);
		if (m)
			onnx__model_proto__free_unpacked(m, NULL);
		return -1;
	}
	Onnx__GraphProto *gp = m->graph;
	int supported = 1;
	for (size_t i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *n = gp->node[i];
		int dflt = !n->domain || !*n->domain || strcmp(n->domain, "ai.onnx") == 0 ||
		           strcmp(n->domain, "ai.onnx.preview.training") == 0;
		if (!dflt || !pb_shape_op_supported(n->op_type)) {
			supported = 0;
			if (ops)
				note_op(ops, n_ops, n->op_type ? n->op_type : "?");
		}
	}
	for (size_t i = 0; i < gp->n_output; i++)
		if (!is_tensor_type(gp->output[i]->type))
			supported = 0;

	/* Inputs with data become initializers (tensor-typed inputs only). */
	Onnx__TensorProto **extra = calloc(gp->n_input + 1, sizeof *extra);
	size_t n_extra = 0;
	for (size_t i = 0; i < gp->n_input; i++) {
		if (!is_tensor_type(gp->input[i]->type))
			continue;
		if (rules_only && is_float_elem(gp->input[i]->type->tensor_type->elem_type))
			continue;
		snprintf(path, sizeof path, "%s/%s/test_data_set_0/input_%zu.pb", NODE_DIR, name,
		         i);
		void *tb = slurp(path, &len);
		if (!tb)
			continue;
		Onnx__TensorProto *t = onnx__tensor_proto__unpack(NULL, len, tb);
		free(tb);
		if (!t)
			continue;
		free(t->name);
		t->name = strdup(gp->input[i]->name);
		extra[n_extra++] = t;
	}
	Onnx__TensorProto **old_init = gp->initializer;
	size_t n_old_init = gp->n_initializer;
	Onnx__TensorProto **all = calloc(n_old_init + n_extra + 1, sizeof *all);
	for (size_t i = 0; i < n_old_init; i++)
		all[i] = old_init[i];
	for (size_t i = 0; i < n_extra; i++)
		all[n_old_init + i] = extra[i];
	gp->initializer = all;
	gp->n_initializer = n_old_init + n_extra;
	/* Hide declared output shapes and value_info. */
	size_t n_vi = gp->n_value_info;
	gp->n_value_info = 0;
	Onnx__TensorShapeProto **saved_shapes = calloc(gp->n_output + 1, sizeof *saved_shapes);
	for (size_t i = 0; i < gp->n_output; i++)
		if (is_tensor_type(gp->output[i]->type)) {
			saved_shapes[i] = gp->output[i]->type->tensor_type->shape;
			gp->output[i]->type->tensor_type->shape = NULL;
		}
	size_t plen = onnx__model_proto__get_packed_size(m);
	uint8_t *packed = malloc(plen + 1);
	onnx__model_proto__pack(m, packed);
	/* Restore the message so that free_unpacked frees what it allocated. */
	for (size_t i = 0; i < gp->n_output; i++)
		if (saved_shapes[i])
			gp->output[i]->type->tensor_type->shape = saved_shapes[i];
	free(saved_shapes);
	gp->n_value_info = n_vi;
	gp->initializer = old_init;
	gp->n_initializer = n_old_init;
	free(all);
	for (size_t i = 0; i < n_extra; i++)
		onnx__tensor_proto__free_unpacked(extra[i], NULL);
	free(extra);

	pb_graph *g = NULL;
	pb_error err = {0};
	int rc = pb_onnx_load_buffer(packed, plen, name, NULL, &g, &err);
	free(packed);
	int result = supported;
	if (rc != PB_OK) {
		if (supported) {
			printf("  FAIL %s: %s\n", name, err.msg);
			result = -1;
		}
		onnx__model_proto__free_unpacked(m, NULL);
		return result;
	}
	(*loaded)++;
	for (size_t i = 0; supported && i < gp->n_output; i++) {
		snprintf(path, sizeof path, "%s/%s/test_data_set_0/output_%zu.pb", NODE_DIR, name,
		         i);
		void *tb = slurp(path, &len);
		Onnx__TensorProto *t = tb ? onnx__tensor_proto__unpack(NULL, len, tb) : NULL;
		free(tb);
		if (!t) {
			printf("  FAIL %s: cannot read expected output %zu\n", name, i);
			result = -1;
			continue;
		}
		(*compared)++;
		int tid = pb_graph_find_tensor(g, gp->output[i]->name);
		const pb_tensor *pt = tid >= 0 ? &g->tensors[tid] : NULL;
		int ok = pt && pt->rank == (int)t->n_dims;
		for (size_t d = 0; ok && d < t->n_dims; d++)
			ok = pt->dims[d] == t->dims[d];
		if (!ok && rules_only && pt) {
			/* Unknown where data was withheld is allowed; wrong is not. */
			int agrees = pt->rank < 0 || pt->rank == (int)t->n_dims;
			for (size_t d = 0; agrees && pt->rank >= 0 && d < t->n_dims; d++)
				agrees = pt->dims[d] < 0 || pt->dims[d] == t->dims[d];
			if (agrees) {
				(*partial)++;
				onnx__tensor_proto__free_unpacked(t, NULL);
				continue;
			}
		}
		if (!ok) {
			char got[128] = "missing", want[128] = "";
			if (pt)
				pb_tensor_shape_str(pt, got, sizeof got);
			size_t off = 0;
			for (size_t d = 0; d < t->n_dims && off < sizeof want; d++)
				off += (size_t)snprintf(want + off, sizeof want - off, "%s%lld",
				                        d ? "x" : "", (long long)t->dims[d]);
			if (t->n_dims == 0)
				snprintf(want, sizeof want, "scalar");
			printf("  MISMATCH%s %s output %zu '%s': inferred %s, expected %s\n",
			       rules_only ? " (rules only)" : "", name, i, gp->output[i]->name, got,
			       want);
			result = -1;
		}
		onnx__tensor_proto__free_unpacked(t, NULL);
	}
	pb_graph_free(g);
	onnx__model_proto__free_unpacked(m, NULL);
	return result;
}

static int cmp_ops(const void *a, const void *b)
{
	return strcmp(((const op_count *)a)->op, ((const op_count *)b)->op);
}

static void test_node_suite(void **state)
{
	DIR *d = opendir(NODE_DIR);
	if (!d) {
		print_message("%s missing (install libonnx-testdata); skipping\n", NODE_DIR);
		skip();
	}
	char **names = NULL;
	int n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			names = realloc(names, (size_t)cap * sizeof *names);
		}
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof *names, cmp_str);
	op_count *ops = calloc(512, sizeof *ops);
	int n_ops = 0, supported = 0, matching = 0, failures = 0, loaded = 0, compared = 0;
	int r_supported = 0, r_matching = 0, r_failures = 0, r_loaded = 0, r_compared = 0;
	int r_partial = 0;
	for (int i = 0; i < n; i++) {
		int r = run_one(names[i], 0, ops, &n_ops, &loaded, &compared, NULL);
		if (r != 0)
			supported++;
		if (r == 1)
			matching++;
		if (r < 0)
			failures++;
		int before = r_partial;
		r = run_one(names[i], 1, NULL, NULL, &r_loaded, &r_compared, &r_partial);
		if (r != 0)
			r_supported++;
		if (r == 1 && r_partial == before)
			r_matching++;
		if (r < 0)
			r_failures++;
		free(names[i]);
	}
	free(names);
	qsort(ops, (size_t)n_ops, sizeof *ops, cmp_ops);
	printf("unsupported operators (tests):");
	for (int i = 0; i < n_ops; i++)
		printf(" %s(%d)", ops[i].op, ops[i].count);
	printf("\nonnx testdata: models %d, loaded %d, supported %d, matching %d (%d output "
	       "shapes compared)\n",
	       n, loaded, supported, matching, compared);
	printf("rules only (float inputs without data): supported %d, matching %d, "
	       "outputs partly unknown %d, wrong %d (%d output shapes compared)\n",
	       r_supported, r_matching, r_partial, r_failures, r_compared);
	free(ops);
	assert_true(n > 0);
	assert_int_equal(failures, 0);
	assert_int_equal(supported, matching);
	assert_int_equal(r_failures, 0);
	assert_int_equal(r_supported, supported);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_node_suite),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
