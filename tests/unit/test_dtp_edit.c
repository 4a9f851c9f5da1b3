/* test_dtp_edit.c — hand edits of a data x tensor x pipeline plan (the plan
 * `shard --train --batch 32 --pipeline auto` keeps; shard/dtp/dtp_edit.c): they
 * were refused ("cannot be re-split by hand"). On a generated 4-layer GPT,
 * cluster-2x8 (a 1F1B plan, dp 8 x pp 2) and cluster-1x8 with --pp 2 (an
 * interleaved plan of 4 chunks):
 *  - `boundary K D` moves exactly the nodes between the two positions from
 *    one chunk to the other, keeps dp, tp, pp, micro-batches and schedule,
 *    and its step time equals a fresh evaluation of the edited split (a new
 *    model load, a new search unit and chunk cache, the configuration read
 *    from the plan) and the schedule's formula over the plan's own chunks;
 *    the printed "before" is the plan's step time;
 *  - undo restores the exact plan, redo the exact edited one;
 *  - a move that breaks a Lua cut rule the plan obeys is refused naming it;
 *    a chunk left empty or one that does not exist is refused;
 *  - `pin` on such a plan: a spec that is no candidate is refused listing
 *    the candidates; one of them is then pinned, in the plan's chunk ops;
 *  - on a shard plan the same refusal lists the candidates, and memory is
 *    printed in bytes units. */
#include "pb_test_ok.h"

#include <math.h>
#include <unistd.h>

#include "shard/cluster.h"
#include "shard/dtp/dtp_edit.h"
#include "shard/pipeline/pipeline_edit.h"

static char buf[1 << 20];
static char model[64];

static int setup(void **state)
{
	(void)state;
	snprintf(model, sizeof model, "/tmp/pb_dtp_edit_%d.onnx", (int)getpid());
	pb_test_session t;
	char line[256];
	snprintf(line, sizeof line,
	         "gen gpt --layers 4 --hidden 256 --heads 4 --seq 128 --vocab 4000 -o %s", model);
	pb_test_session_open(&t, buf, sizeof buf);
	pb_test_ok(&t, line);
	pb_test_session_close(&t);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(model);
	return 0;
}

static char *dump(const pb_plan *p)
{
	json_t *j = pb_plan_to_json(p, NULL);
	char *s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(17));
	json_decref(j);
	return s;
}

static int side_reload(void *ud, long batch, const pb_graph **g, pb_error *err)
{
	pb_session *s = ud;
	int rc = pb_session_set_batch(s, batch, err);
	*g = s->graph;
	return rc;
}

/* The step time of plan p's split, evaluated afresh: the model loaded
 * anew, a new unit (its own chunk cache) with p's configuration. */
static double fresh_step(const pb_plan *p, const pb_plan *made_by_shard, const char *layout)
{
	pb_session *side = pb_session_new();
	pb_error err = {0};
	assert_int_equal(pb_session_open_model(side, model, NULL, 0, &err), PB_OK);
	assert_int_equal(pb_session_open_layout(side, layout, &err), PB_OK);
	pb_cluster cl;
	assert_int_equal(pb_cluster_from_hw(side->hw, &cl, &err), PB_OK);
	pb_dtp_opts o;
	pb_dtp_edit_options(made_by_shard, &o);
	o.pipe.reload = side_reload;
	o.pipe.reload_ud = side;
	int pp = (int)pb_plan_metric(p, "pp", 0), m = (int)pb_plan_metric(p, "microbatches", 0);
	long B = (long)json_integer_value(json_object_get(p->detail, "batch"));
	const pb_graph *g = side->graph;
	assert_int_equal(pb_dtp_search_reload(&o, B / m, &g, &err), PB_OK);
	pb_dtp_unit u;
	double *cost = NULL;
	assert_int_equal(pb_dtp_search_unit_open(&u, g, &cl, &o, pp, m, &cost, &err), PB_OK);
	int sched, v;
	assert_int_equal(pb_dtp_search_parse_schedule(
	                     json_string_value(json_object_get(p->detail, "pipeline_schedule")),
	                     &sched, &v, &err),
	                 PB_OK);
	u.sched = sched;
	u.v = v;
	u.n_chunks = pp * v;
	assert_int_equal(
	    pb_pipeline_stages_split_given(g, cost, u.n_chunks, p->group, &u.split, &err), PB_OK);
	pb_dtp_search_unit_bytes(&u);
	pb_dtp_config c;
	memset(&c, 0, sizeof c);
	assert_int_equal(pb_dtp_search_unit_eval(&u, (int)pb_plan_metric(p, "dp", 0),
	                                         (int)pb_plan_metric(p, "tp", 0), 0, &c, &err),
	                 PB_OK);
	assert_true(c.ok);
	pb_dtp_search_unit_close(&u, cost);
	pb_cluster_free(&cl);
	pb_session_free(side);
	return c.step_time;
}

/* The schedule's step time over the plan's own chunks (dtp_search.h). */
static void check_formula(const pb_plan *p)
{
	const json_t *d = p->detail, *st = json_object_get(d, "stages");
	int pp = (int)pb_plan_metric(p, "pp", 0), m = (int)pb_plan_metric(p, "microbatches", 0);
	int V = (int)pb_plan_metric(p, "chunks_per_device", 1);
	double gt[16] = {0}, slowest = 0,
	       grad = json_real_value(json_object_get(d, "grad_exposed"));
	double p2p = json_real_value(json_object_get(d, "p2p"));
	assert_int_equal(json_array_size(st), (size_t)(pp * V));
	for (size_t k = 0; k < json_array_size(st); k++)
		gt[k % (size_t)pp] +=
		    json_real_value(json_object_get(json_array_get(st, k), "time"));
	for (int s = 0; s < pp; s++)
		slowest = fmax(slowest, gt[s]);
	/* the transfers in the step (pipeline_p2p.h: overlapped, the fill, the
	 * drain and what the passes cannot hide), at most all of them */
	double K = V == 1 ? m + pp - 1 : m + (double)(pp - 1) / V;
	double exposed = json_real_value(json_object_get(d, "p2p_exposed"));
	assert_true(exposed >= (pp - 1) * p2p * (1 - 1e-9) && exposed <= K * V * p2p * (1 + 1e-9));
	double step = K * slowest + exposed + grad;
	assert_float_equal(pb_plan_metric(p, "step_time", NAN), step, 1e-9 * step);
}

/* boundary K D on the session's dtp plan; the checks of the header. */
static void move_and_check(pb_test_session *t, const char *layout, int k, int d)
{
	pb_plan *old = pb_plan_copy(t->s->plan);
	char *old_s = dump(old);
	char line[64];
	snprintf(line, sizeof line, "boundary %d %d --json", k, d);
	pb_test_ok(t, line);
	json_t *j = json_loads(t->buf, 0, NULL);
	assert_non_null(j);
	const pb_plan *p = t->s->plan;
	assert_string_equal(p->method, "manual");
	double bj = json_real_value(json_object_get(json_object_get(j, "before"), "step_time"));
	double aj = json_real_value(json_object_get(json_object_get(j, "after"), "step_time"));
	double t0 = pb_plan_metric(old, "step_time", NAN), t1 = pb_plan_metric(p, "step_time", NAN);
	assert_float_equal(bj, t0, 1e-9 * t0);
	assert_float_equal(aj, t1, 1e-9 * t1);
	json_decref(j);
	/* the configuration stays; exactly the nodes between the boundaries move */
	const char *keep[] = {"dp", "tp", "pp", "microbatches", "chunks_per_device"};
	for (int i = 0; i < 5; i++)
		assert_true(pb_plan_metric(p, keep[i], -1) == pb_plan_metric(old, keep[i], -2));
	int moved = 0;
	for (int v = 0; v < p->n_nodes; v++) {
		if (p->group[v] == old->group[v])
			continue;
		moved++;
		if (d > 0)
			assert_true(old->group[v] == k + 1 && p->group[v] == k);
		else
			assert_true(old->group[v] == k && p->group[v] == k + 1);
	}
	assert_true(moved >= abs(d));
	/* its step time is a fresh evaluation's, and the schedule's formula */
	double f = fresh_step(p, old, layout);
	if (!(fabs(f - t1) <= 1e-9 * t1))
		fail_msg("edited plan %.12g s, fresh evaluation %.12g s", t1, f);
	check_formula(p);
	/* undo / redo: the exact plans */
	char *new_s = dump(p);
	pb_test_ok(t, "undo");
	char *u = dump(t->s->plan);
	assert_string_equal(u, old_s);
	pb_test_ok(t, "redo");
	char *r = dump(t->s->plan);
	assert_string_equal(r, new_s);
	free(u);
	free(r);
	free(new_s);
	free(old_s);
	pb_plan_free(old);
}

static void refused(pb_test_session *t, const char *line, const char *needle)
{
	char *before = dump(t->s->plan);
	pb_error err = {0};
	if (pb_test_session_cmd(t, line, &err) == PB_OK)
		fail_msg("'%s' should be refused", line);
	if (!strstr(err.msg, needle))
		fail_msg("'%s': '%s' lacks '%s'", line, err.msg, needle);
	char *after = dump(t->s->plan);
	assert_string_equal(after, before);
	free(before);
	free(after);
}

/* pin on the dp x tp x pp plan: a bad spec lists the candidates, one of
 * them is pinned */
static void pin_checks(pb_test_session *t)
{
	char line[512];
	const pb_graph *g = t->s->graph;
	int mm = -1;
	for (int v = 0; v < g->n_nodes && mm < 0; v++)
		if (strcmp(g->nodes[v].op, "MatMul") == 0 && *pb_spec_pin_strategy(t->s->plan, v))
			mm = v;
	assert_true(mm >= 0);
	const char *name = g->nodes[mm].name;
	char was[40];
	snprintf(was, sizeof was, "%s", pb_spec_pin_strategy(t->s->plan, mm));
	snprintf(line, sizeof line, "pin --node %s --spec nosuchspec", name);
	pb_error err = {0};
	char *before = dump(t->s->plan);
	assert_int_equal(pb_test_session_cmd(t, line, &err), PB_EUSAGE);
	char *cand = strstr(err.msg, "its candidates: ");
	if (!cand)
		fail_msg("no candidate list: %s", err.msg);
	char *after = dump(t->s->plan);
	assert_string_equal(after, before);
	free(before);
	free(after);
	/* the first candidate that is not the current spec */
	char pick[40] = "";
	cand += strlen("its candidates: ");
	while (*cand && !pick[0]) {
		size_t n = strcspn(cand, ", (");
		if (n > 0 && n < sizeof pick && (strncmp(cand, was, n) != 0 || strlen(was) != n))
			snprintf(pick, sizeof pick, "%.*s", (int)n, cand);
		cand += n;
		cand += strspn(cand, ", ");
		if (*cand == '(')
			break;
	}
	assert_true(pick[0] != '\0');
	snprintf(line, sizeof line, "pin --node %s --spec %s", name, pick);
	pb_test_ok(t, line);
	assert_string_equal(pb_spec_pin_strategy(t->s->plan, mm), pick);
	assert_string_equal(t->s->plan->method, "manual");
	assert_true(pb_plan_metric(t->s->plan, "dp", 0) > 0);
	const json_t *pl = json_object_get(t->s->plan->detail, "pinned");
	assert_int_equal(json_array_size(pl), 1);
	if (!strstr(t->buf, "step_time") || !strstr(t->buf, " -> "))
		fail_msg("no before -> after: %s", t->buf);
	check_formula(t->s->plan);
}

static void test_boundary_1f1b(void **state)
{
	(void)state;
	pb_test_session t;
	char line[512];
	snprintf(
	    line, sizeof line,
	    "shard %s --layout layouts/cluster-2x8.lua --train --batch 32 --pipeline auto -j 1",
	    model);
	pb_test_session_with(&t, buf, sizeof buf, model, line);
	const pb_plan *p = t.s->plan;
	assert_true(pb_dtp_edit_is_dtp(p));
	assert_true(pb_plan_metric(p, "pp", 0) == 2);
	assert_string_equal(json_string_value(json_object_get(p->detail, "pipeline_schedule")),
	                    "1f1b");
	move_and_check(&t, "layouts/cluster-2x8.lua", 0, 3);
	move_and_check(&t, "layouts/cluster-2x8.lua", 0, -5);
	/* refusals: a chunk that does not exist, an empty chunk, a Lua rule */
	refused(&t, "boundary 1 1", "no next group");
	snprintf(line, sizeof line, "boundary 0 -%d", t.s->plan->n_nodes);
	refused(&t, line, "plan unchanged");
	int first1 = -1;
	for (int v = 0; v < t.s->plan->n_nodes && first1 < 0; v++)
		if (t.s->plan->group[v] == 1)
			first1 = v;
	pb_test_rule(&t, "hand_rule", "cut = 'forbid'", first1);
	refused(&t, "boundary 0 1", "Lua rule 'hand_rule' (cut=forbid)");
	/* pins on the edited plan (its search options carried over) */
	pb_error err = {0};
	assert_int_equal(pb_test_session_lua(&t, "pb.clear()", "clear.lua", &err), PB_OK);
	pin_checks(&t);
	pb_test_session_close(&t);
}

static void test_boundary_interleaved(void **state)
{
	(void)state;
	pb_test_session t;
	char line[512];
	snprintf(line, sizeof line,
	         "shard %s --layout layouts/cluster-1x8.lua --train --batch 32 --pipeline auto "
	         "--pp 2 -j 1",
	         model);
	pb_test_session_with(&t, buf, sizeof buf, model, line);
	const pb_plan *p = t.s->plan;
	assert_true(pb_dtp_edit_is_dtp(p));
	assert_true(pb_plan_metric(p, "chunks_per_device", 1) >= 2);
	move_and_check(&t, "layouts/cluster-1x8.lua", 1, 2);
	move_and_check(&t, "layouts/cluster-1x8.lua", 2, -2);
	pb_test_session_close(&t);
}

/* pin on a shard plan: a bad spec lists the candidates; memory in bytes
 * units (it printed "323228280 -> 268439292") */
static void test_shard_pin_messages(void **state)
{
	(void)state;
	pb_test_session t;
	char line[512];
	snprintf(line, sizeof line, "shard %s --layout layouts/cluster-1x8.lua --batch 8 -j 1",
	         model);
	pb_test_session_with(&t, buf, sizeof buf, model, line);
	assert_string_equal(t.s->plan->kind, "shard");
	pb_error err = {0};
	assert_int_equal(
	    pb_test_session_cmd(&t, "pin --node h0.attn.q.matmul --spec nosuchspec", &err),
	    PB_EUSAGE);
	if (!strstr(err.msg, "its candidates: rep, ") || !strstr(err.msg, "plan unchanged"))
		fail_msg("%s", err.msg);
	const char *was =
	    pb_spec_pin_strategy(t.s->plan, pb_graph_find_node(t.s->graph, "h0.attn.q.matmul"));
	snprintf(line, sizeof line, "pin --node h0.attn.q.matmul --spec %s",
	         strcmp(was, "rep") ? "rep" : "m");
	pb_test_ok(&t, line);
	const char *mem = strstr(t.buf, "memory_per_device");
	if (!mem || !strstr(mem, "B -> ") || !strstr(t.buf, "h0.attn.q.matmul"))
		fail_msg("no memory in bytes units or no changed spec: %s", t.buf);
	pb_test_session_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_boundary_1f1b),
	    cmocka_unit_test(test_boundary_interleaved),
	    cmocka_unit_test(test_shard_pin_messages),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
