/*
 * test_extract.c — a plan's parts (core/export/extract.h): the cut is
 * consistent on every bundled ONNX model (checked against the graph, not
 * against the splitter's own bookkeeping), circles and kinds without parts
 * are refused, and `extract DIR` in a session writes parts whose nodes and
 * initializers are the source's messages, byte for byte (decoded with
 * protobuf-c and re-packed on both sides).
 */
#include <sys/stat.h>
#include <unistd.h>

#include "pb_test.h"
#include "export/extract.h"
#include "onnx.pb-c.h"
#include "util/read_file.h"

/* n_groups contiguous groups over the node ids */
static pb_plan *range_plan(const pb_graph *g, int n_groups, const char *kind)
{
	pb_plan *p = pb_plan_new(kind, "test", g->n_nodes);
	for (int k = 0; k < n_groups; k++) {
		pb_plan_group gr = {0};
		char label[32];
		snprintf(label, sizeof label, "g%d", k);
		gr.label = label;
		gr.first_unit = k;
		gr.n_units = 1;
		gr.time = 1e-3 * (k + 1);
		pb_plan_add_group(p, &gr);
	}
	for (int v = 0; v < g->n_nodes; v++)
		p->group[v] = (int)((long)v * n_groups / g->n_nodes);
	return p;
}

static int find(const int *a, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (a[i] == x)
			return i;
	return -1;
}

/* The cut's invariants, from the graph. */
static void check_split(const pb_graph *g, const pb_plan *plan, const pb_extract_split_t *s)
{
	unsigned char *cst = pb_graph_constant_nodes(g);
	assert_non_null(cst);
	int *part_of_node = malloc((size_t)g->n_nodes * sizeof *part_of_node);
	for (int v = 0; v < g->n_nodes; v++)
		part_of_node[v] = -1;
	for (int k = 0; k < s->n_parts; k++) {
		const pb_extract_part *p = &s->parts[k];
		for (int i = 0; i < p->n_nodes; i++) {
			int v = p->nodes[i];
			if (cst[v])
				continue;
			/* a computing node is in exactly one part: its plan group's */
			assert_int_equal(part_of_node[v], -1);
			part_of_node[v] = k;
			assert_int_equal(plan->group[v], p->group);
		}
	}
	for (int v = 0; v < g->n_nodes; v++)
		if (!cst[v])
			assert_true(part_of_node[v] >= 0);
	for (int k = 0; k < s->n_parts; k++) {
		const pb_extract_part *p = &s->parts[k];
		/* every tensor read and not made here (initializers aside) is an input */
		for (int i = 0; i < p->n_nodes; i++) {
			const pb_node *n = &g->nodes[p->nodes[i]];
			for (int j = 0; j < n->n_inputs; j++) {
				int t = n->inputs[j];
				if (t < 0)
					continue;
				const pb_tensor *ten = &g->tensors[t];
				int local = ten->producer >= 0 &&
				            find(p->nodes, p->n_nodes, ten->producer) >= 0;
				int weight =
				    ten->producer < 0 && ten->is_initializer && !ten->is_input;
				assert_int_equal(find(p->inputs, p->n_inputs, t) >= 0,
				                 !local && !weight);
			}
		}
		/* every input comes from the model or an earlier part that outputs it */
		for (int i = 0; i < p->n_inputs; i++) {
			int t = p->inputs[i], from = p->input_from[i];
			if (from < 0) {
				assert_true(g->tensors[t].is_input);
				continue;
			}
			assert_true(from < k);
			assert_true(find(s->parts[from].outputs, s->parts[from].n_outputs, t) >= 0);
			assert_int_equal(part_of_node[g->tensors[t].producer], from);
		}
		/* every output is read later or is a model output */
		for (int i = 0; i < p->n_outputs; i++) {
			int t = p->outputs[i], read = g->tensors[t].is_output;
			for (int q = k + 1; q < s->n_parts && !read; q++)
				read = find(s->parts[q].inputs, s->parts[q].n_inputs, t) >= 0;
			assert_true(read);
		}
	}
	/* every model output leaves some part */
	for (int i = 0; i < g->n_outputs; i++) {
		int found = 0;
		for (int k = 0; k < s->n_parts; k++)
			found |=
			    find(s->parts[k].outputs, s->parts[k].n_outputs, g->outputs[i]) >= 0;
		assert_true(found);
	}
	free(part_of_node);
	free(cst);
}

static void test_split_bundled_models(void **state)
{
	(void)state;
	size_t n;
	const char *const *models = pb_test_models(&n);
	for (size_t m = 0; m < n; m++) {
		if (!strstr(models[m], ".onnx"))
			continue;
		pb_graph *g = pb_test_load_model(models[m]);
		for (int groups = 1; groups <= 7; groups += 3) {
			pb_plan *plan = range_plan(g, groups, "partition");
			pb_extract_split_t *s = NULL;
			pb_error err = {0};
			int rc = pb_extract_split(g, plan, "range plan", &s, &err);
			if (rc)
				fail_msg("%s, %d groups: %s", models[m], groups, err.msg);
			assert_true(s->n_parts >= 1 && s->n_parts <= groups);
			check_split(g, plan, s);
			pb_extract_split_free(s);
			pb_plan_free(plan);
		}
		pb_graph_free(g);
	}
}

static void test_refused_plans(void **state)
{
	(void)state;
	pb_graph *g = pb_test_load_model("resnet18.onnx");
	pb_error err = {0};
	pb_extract_split_t *s = NULL;
	/* alternating groups along a chain: each needs the other */
	pb_plan *plan = range_plan(g, 2, "partition");
	unsigned char *cst = pb_graph_constant_nodes(g);
	int flip = 0;
	for (int v = 0; v < g->n_nodes; v++)
		if (!cst[v])
			plan->group[v] = flip++ % 2;
	assert_int_equal(pb_extract_split(g, plan, "alt.json", &s, &err), PB_EINPUT);
	pb_test_expect_msg(&err, "alt.json", "circle", "g0");
	assert_null(s);
	pb_plan_free(plan);
	free(cst);
	/* kinds without parts */
	plan = range_plan(g, 2, "shard");
	assert_int_equal(pb_extract_split(g, plan, "shard.json", &s, &err), PB_EINPUT);
	pb_test_expect_msg(&err, "shard.json", "a shard plan has no parts", NULL);
	pb_plan_free(plan);
	/* no node in any group */
	plan = range_plan(g, 2, "map");
	for (int v = 0; v < g->n_nodes; v++)
		plan->group[v] = -1;
	assert_int_equal(pb_extract_split(g, plan, "empty.json", &s, &err), PB_EINPUT);
	pb_test_expect_msg(&err, "empty.json", "no parts", NULL);
	pb_plan_free(plan);
	pb_graph_free(g);
}

static Onnx__ModelProto *unpack_file(const char *path)
{
	char *data;
	size_t len;
	pb_error err = {0};
	if (pb_read_file(path, PB_DOOR_MODEL, 0, "model", &data, &len, &err))
		fail_msg("%s", err.msg);
	Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, (const uint8_t *)data);
	free(data);
	assert_non_null(m);
	return m;
}

static int same_message(const ProtobufCMessage *a, const ProtobufCMessage *b)
{
	size_t na = protobuf_c_message_get_packed_size(a),
	       nb = protobuf_c_message_get_packed_size(b);
	if (na != nb)
		return 0;
	uint8_t *ba = malloc(na + 1), *bb = malloc(nb + 1);
	protobuf_c_message_pack(a, ba);
	protobuf_c_message_pack(b, bb);
	int same = memcmp(ba, bb, na) == 0;
	free(ba);
	free(bb);
	return same;
}

static void test_session_extract_dir(void **state)
{
	(void)state;
	char buf[1 << 16], dir[] = "/tmp/pb_test_extract.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char out[sizeof dir + 8];
	snprintf(out, sizeof out, "%s/parts", dir);
	pb_test_session t;
	pb_test_session_open(&t, buf, sizeof buf);
	pb_error err = {0};
	assert_int_equal(pb_test_session_cmd(&t, "open models/squeezenet1_1-weights.onnx", &err),
	                 0);
	assert_int_equal(
	    pb_test_session_cmd(&t, "partition --layout layouts/manycore-16.lua", &err), 0);
	char line[256];
	snprintf(line, sizeof line, "extract %s", out); /* the workbench's :extract DIR */
	if (pb_test_session_cmd(&t, line, &err))
		fail_msg("%s", err.msg);
	assert_non_null(strstr(buf, "weights inline"));
	int n_groups = t.s->plan->n_groups;
	Onnx__ModelProto *src = unpack_file("models/squeezenet1_1-weights.onnx");
	int nodes_seen = 0, k;
	for (k = 0;; k++) {
		char path[256];
		snprintf(path, sizeof path, "%s/part%d.onnx", out, k);
		if (access(path, F_OK) != 0)
			break;
		Onnx__ModelProto *m = unpack_file(path);
		assert_int_equal(m->ir_version, src->ir_version);
		assert_int_equal(m->n_opset_import, src->n_opset_import);
		assert_int_equal(m->opset_import[0]->version, src->opset_import[0]->version);
		/* every node and initializer is one of the source's, identical */
		for (size_t i = 0; i < m->graph->n_node; i++) {
			const Onnx__NodeProto *n = m->graph->node[i];
			size_t j = 0;
			while (j < src->graph->n_node && strcmp(src->graph->node[j]->name, n->name))
				j++;
			assert_true(j < src->graph->n_node);
			assert_true(same_message(&n->base, &src->graph->node[j]->base));
			nodes_seen++;
		}
		for (size_t i = 0; i < m->graph->n_initializer; i++) {
			const Onnx__TensorProto *w = m->graph->initializer[i];
			size_t j = 0;
			while (j < src->graph->n_initializer &&
			       strcmp(src->graph->initializer[j]->name, w->name))
				j++;
			assert_true(j < src->graph->n_initializer);
			assert_true(same_message(&w->base, &src->graph->initializer[j]->base));
			assert_true(w->raw_data.len > 0); /* real weights, inline */
		}
		onnx__model_proto__free_unpacked(m, NULL);
	}
	assert_int_equal(k, n_groups);
	assert_true(nodes_seen >= (int)src->graph->n_node); /* constants may be copied */
	onnx__model_proto__free_unpacked(src, NULL);
	/* a second extract into the same folder is refused, and leaves it whole */
	assert_int_equal(pb_test_session_cmd(&t, line, &err), PB_EINPUT);
	pb_test_expect_msg(&err, "parts", "not empty", "--force");
	snprintf(line, sizeof line, "%s/manifest.json", out);
	json_t *man = json_load_file(line, 0, NULL);
	assert_non_null(man);
	assert_int_equal(json_array_size(json_object_get(man, "parts")), n_groups);
	json_decref(man);
	pb_test_session_close(&t);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_split_bundled_models),
	    cmocka_unit_test(test_refused_plans),
	    cmocka_unit_test(test_session_extract_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
