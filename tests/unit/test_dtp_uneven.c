/* test_dtp_uneven.c — the data x tensor x pipeline search beyond equal
 * stages, on generated GPTs.
 * Interleaving with V >= 3 chunks per device (dtp_interleave.c, over
 * cluster-2x8): V = 3 is tried where pp x 3 chunks fit the layers and is
 * costed by the interleaved formula; V >= 4 only after V beat V - 1; a fixed
 * interleaved:3 gives the free search's numbers.
 * Uneven device groups (dtp_uneven.c): with a 196,608-word vocabulary and a
 * small hidden size the head outweighs the blocks, and on cluster-4x8 an
 * uneven configuration beats every even one; its plan has the row's step
 * time and each stage on its own device range. On a 12-layer model with a
 * small vocabulary the even configuration stays the best.
 * Degrees by stage MILP times: on cluster-8x8 the search's uneven row beats
 * the FLOPs DP's choice for the same (dp, m) costed exactly with only its
 * boundaries moved. Interleaved on uneven groups: chunk k on group k mod p,
 * the step from the slowest group's summed chunks, the plan the row's. */
#include "pb_test.h"

#include <unistd.h>

#include "model/gen_gpt.h"
#include "plan.h"
#include "session.h"
#include "shard/dtp/dtp_search.h"
#include "shard/dtp/dtp_uneven.h"
#include "shard/dtp/dtp.h"
#include "shard/dtp/dtp_plan.h"
#include "shard/dtp/dtp_report.h"
#include "shard/dtp/dtp_interleave.h"

#define LAYOUT "layouts/cluster-2x8.lua"

static char path12[64], path6[64], pathv[64], path8v[64];

static int reload(void *ud, long batch, const pb_graph **g, pb_error *err)
{
	pb_session *s = ud;
	int rc = pb_session_set_batch(s, batch, err);
	*g = s->graph;
	return rc;
}

static int gen(char *path, size_t n, const char *tag, int layers, int hidden, int vocab)
{
	pb_gpt_spec sp;
	pb_gpt_spec_default(&sp);
	sp.layers = layers;
	sp.hidden = hidden;
	sp.heads = 4;
	sp.seq = 64;
	sp.vocab = vocab;
	snprintf(path, n, "/tmp/pb_test_dtpu_%s_%d.onnx", tag, (int)getpid());
	pb_error err = {0};
	return pb_gen_gpt_write(&sp, path, &err) == PB_OK ? 0 : -1;
}

static int setup(void **state)
{
	(void)state;
	if (gen(path12, sizeof path12, "g12", 12, 256, 4000) ||
	    gen(path6, sizeof path6, "g6", 6, 256, 4000) ||
	    gen(pathv, sizeof pathv, "gv", 4, 256, 196608) ||
	    gen(path8v, sizeof path8v, "g8v", 8, 256, 196608))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path12);
	unlink(path6);
	unlink(pathv);
	unlink(path8v);
	return 0;
}

static pb_session *open_on(const char *path, const char *layout, pb_cluster *cl)
{
	pb_session *s = pb_session_new();
	pb_error err = {0};
	assert_int_equal(pb_session_open_model(s, path, NULL, 0, &err), PB_OK);
	assert_int_equal(pb_session_open_layout(s, layout, &err), PB_OK);
	assert_int_equal(pb_cluster_from_hw(s->hw, cl, &err), PB_OK);
	cl->p2p_overlap = 0; /* transfers not overlapped: the schedules' formulas below */
	return s;
}

static pb_session *open_session(const char *path, pb_cluster *cl)
{
	return open_on(path, LAYOUT, cl);
}

static void opts_for(pb_dtp_opts *o, pb_session *s, long batch)
{
	pb_dtp_search_opts_default(o);
	o->pipe.batch = batch;
	o->pipe.train = 1;
	o->pipe.reload = reload;
	o->pipe.reload_ud = s;
	o->shard.train = 1;
	o->shard.optimizer = PB_OPTIM_ADAM;
	o->shard.layers = 1;
}

static void search(pb_session *s, const pb_cluster *cl, const pb_dtp_opts *o, pb_dtp_result *r)
{
	pb_error err = {0};
	int rc = pb_dtp_search(s->graph, cl, o, r, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	rc = pb_dtp_search_add_operator(r, o, cl, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
}

static int close_to(double a, double b)
{
	return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

static double best_fitting(const pb_dtp_result *r, int dp, int v)
{
	double b = INFINITY;
	for (int i = 0; i < r->n; i++) {
		const pb_dtp_config *c = &r->cfg[i];
		if (c->ok && c->fits && c->dp == dp && c->sched == PB_SCHED_INTERLEAVED &&
		    c->v == v)
			b = fmin(b, c->step_time);
	}
	return b;
}

/* 12 layers, 2 stages, 8 micro-batches: V = 3 (6 chunks) is tried and
 * costed by the interleaved formula; no V above 12 / 2 = 6; a V >= 4 row of
 * a dp only after its V - 1 beat V - 2. */
static void test_interleave_v3(void **state)
{
	(void)state;
	pb_cluster cl;
	pb_session *s = open_session(path12, &cl);
	pb_error err = {0};
	assert_int_equal(pb_dtp_interleave_count_blocks(s->graph), 12);
	pb_dtp_opts o;
	opts_for(&o, s, 16);
	o.pp = 2;
	o.m = 8;
	pb_dtp_result r;
	search(s, &cl, &o, &r);
	int v3 = 0, vmax = 0;
	for (int i = 0; i < r.n; i++) {
		const pb_dtp_config *c = &r.cfg[i];
		if (c->sched != PB_SCHED_INTERLEAVED || !c->ok)
			continue;
		int V = c->v, p = c->pp, m = c->m;
		assert_true(V * p <= 12);
		double want =
		    (c->slowest + V * c->p2p) * (m + (double)(p - 1) / V) + c->grad_exposed;
		assert_true(close_to(c->step_time, want));
		assert_true(close_to(c->bubble, (double)(p - 1) / ((double)V * m + p - 1)));
		v3 += V == 3;
		vmax = V > vmax ? V : vmax;
		if (V >= 4)
			assert_true(best_fitting(&r, c->dp, V - 1) <
			            best_fitting(&r, c->dp, V - 2));
	}
	assert_true(v3 > 0);
	assert_true(vmax >= 3);

	/* interleaved:3 fixed: the free search's numbers */
	const pb_dtp_config *c3 = NULL;
	for (int i = 0; i < r.n && !c3; i++)
		if (r.cfg[i].ok && r.cfg[i].sched == PB_SCHED_INTERLEAVED && r.cfg[i].v == 3)
			c3 = &r.cfg[i];
	assert_non_null(c3);
	pb_dtp_opts f;
	opts_for(&f, s, 16);
	f.dp = c3->dp;
	f.tp = c3->tp;
	f.pp = c3->pp;
	f.m = c3->m;
	assert_int_equal(pb_dtp_search_parse_schedule("interleaved:3", &f.sched, &f.v, &err),
	                 PB_OK);
	pb_dtp_result one;
	search(s, &cl, &f, &one);
	assert_int_equal(one.n, 1);
	assert_int_equal(one.cfg[0].v, 3);
	assert_true(close_to(one.cfg[0].step_time, c3->step_time));
	assert_true(close_to(one.cfg[0].memory, c3->memory));
	pb_dtp_search_result_free(&one);
	pb_dtp_search_result_free(&r);
	pb_cluster_free(&cl);
	pb_session_free(s);
}

/* 6 layers on 4 stages: 3 chunks per device would be 12 > 6 layers, so
 * interleaving stays at V = 2; --schedule 1f1b tries no interleaving; on 8
 * stages even V = 2 would cut the layers into chunks under half a layer. */
static void test_interleave_layers_cap(void **state)
{
	(void)state;
	pb_cluster cl;
	pb_session *s = open_session(path6, &cl);
	pb_dtp_opts o;
	opts_for(&o, s, 16);
	o.pp = 4;
	o.m = 4;
	pb_dtp_result r;
	search(s, &cl, &o, &r);
	int v2 = 0;
	for (int i = 0; i < r.n; i++) {
		assert_true(r.cfg[i].v <= 2);
		v2 += r.cfg[i].v == 2;
	}
	assert_true(v2 > 0);
	pb_dtp_search_result_free(&r);
	opts_for(&o, s, 16);
	o.pp = 2;
	o.m = 8;
	o.sched = PB_SCHED_1F1B;
	search(s, &cl, &o, &r);
	for (int i = 0; i < r.n; i++)
		assert_int_equal(r.cfg[i].v, 1);
	pb_dtp_search_result_free(&r);
	/* 8 stages x 2 chunks = 16 > 2 x 6 layers: no interleaving at all */
	opts_for(&o, s, 16);
	o.pp = 8;
	o.m = 8;
	search(s, &cl, &o, &r);
	assert_true(r.n > 0);
	for (int i = 0; i < r.n; i++)
		assert_int_equal(r.cfg[i].v, 1);
	pb_dtp_search_result_free(&r);
	pb_cluster_free(&cl);
	pb_session_free(s);
}

/* The head of a 196,608-word vocabulary (hidden 256) is ~30x a block's
 * FLOPs: an uneven configuration beats every even row; its groups are
 * consecutive, dp x tp_s devices each, N in all, not all equal; its step is
 * the 1F1B formula; its plan (pb_dtp_plan), solved again or the one the
 * search kept, has the row's step time and each stage's device range. */
static void test_uneven_pays(void **state)
{
	(void)state;
	pb_cluster cl;
	pb_session *s = open_on(pathv, "layouts/cluster-4x8.lua", &cl);
	pb_dtp_opts o;
	opts_for(&o, s, 16);
	pb_dtp_result r;
	search(s, &cl, &o, &r);
	assert_true(r.best >= 0);
	const pb_dtp_config *b = &r.cfg[r.best];
	assert_int_equal(b->uneven, 1);
	assert_true(b->ok && b->fits);
	int n_even = 0;
	for (int i = 0; i < r.n; i++) {
		const pb_dtp_config *c = &r.cfg[i];
		if (c->uneven || !c->ok)
			continue;
		n_even++;
		assert_true(b->step_time < c->step_time);
	}
	assert_true(n_even > 10);
	int sum = 0, same = 1, prev_end = 0;
	for (int k = 0; k < b->pp; k++) {
		int first, n;
		pb_dtp_plan_group_devices(b, k, &first, &n);
		assert_int_equal(first, sum);
		assert_int_equal(n, b->dp * b->stage_tp[k]);
		sum += n;
		same &= b->stage_tp[k] == b->stage_tp[0];
		assert_true(b->stage_end[k] > prev_end);
		prev_end = b->stage_end[k];
	}
	assert_int_equal(sum, 32);
	assert_false(same);
	assert_int_equal(b->sched, PB_SCHED_1F1B);
	assert_true(
	    close_to(b->step_time, (b->slowest + b->p2p) * (b->m + b->pp - 1) + b->grad_exposed));
	assert_true(b->bound > 0 && b->bound <= b->step_time);
	json_t *js = pb_dtp_report_config_json(b);
	assert_int_equal(json_array_size(json_object_get(js, "stage_tp")), (size_t)b->pp);
	assert_int_equal(json_array_size(json_object_get(js, "stage_devices")), (size_t)b->pp);
	json_decref(js);

	/* solved again (no result given), then the plan the search kept */
	pb_plan *plan = NULL;
	pb_error err = {0};
	const pb_graph *g = r.g;
	int rc = pb_dtp_plan(&g, &cl, &o, b, r.batch, NULL, &plan, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	assert_true(close_to(pb_plan_metric(plan, "step_time", 0), b->step_time));
	pb_plan_free(plan);
	assert_non_null(r.kept);
	assert_int_equal(r.kept_cfg.uneven, 1);
	pb_plan *kept = r.kept;
	rc = pb_dtp_plan(&g, &cl, &o, b, r.batch, &r, &plan, &err);
	assert_int_equal(rc, PB_OK);
	assert_ptr_equal(plan, kept);
	assert_null(r.kept);
	assert_true(close_to(pb_plan_metric(plan, "step_time", 0), b->step_time));
	assert_int_equal(plan->n_groups, b->pp);
	for (int k = 0; k < b->pp; k++) {
		int first, n;
		pb_dtp_plan_group_devices(b, k, &first, &n);
		assert_int_equal(plan->groups[k].first_unit, first);
		assert_int_equal(plan->groups[k].n_units, n);
	}
	pb_plan_free(plan);
	pb_dtp_search_result_free(&r);
	pb_cluster_free(&cl);
	pb_session_free(s);
}

/* 12 equal blocks and a small head: no uneven configuration is the best
 * (none is tried where the DP's answer has equal degrees; any tried is not
 * faster than the best even row). */
static void test_uneven_not_paying(void **state)
{
	(void)state;
	pb_cluster cl;
	pb_session *s = open_session(path12, &cl);
	pb_dtp_opts o;
	opts_for(&o, s, 16);
	pb_dtp_result r;
	search(s, &cl, &o, &r);
	assert_true(r.best >= 0);
	assert_int_equal(r.cfg[r.best].uneven, 0);
	for (int i = 0; i < r.n; i++)
		if (r.cfg[i].uneven && r.cfg[i].ok && r.cfg[i].fits)
			assert_true(r.cfg[i].step_time >= r.cfg[r.best].step_time);
	pb_dtp_search_result_free(&r);
	pb_cluster_free(&cl);
	pb_session_free(s);
}

/* 8 layers, vocabulary 196,608, cluster-8x8, batch 64: the FLOPs DP of the
 * seed (dp 8, m 8) picks 2 stages (tp 2+6); the stage MILPs pick 3 (tp
 * 1+1+6), which the search keeps: its row is faster than the FLOPs choice
 * costed exactly, boundaries moved, degrees kept (pb_dtp_uneven_eval_improve without
 * degree trades), and its degrees differ. */
static void test_uneven_milp_degrees(void **state)
{
	(void)state;
	pb_cluster cl;
	pb_session *s = open_on(path8v, "layouts/cluster-8x8.lua", &cl);
	pb_dtp_opts o;
	opts_for(&o, s, 64);
	pb_dtp_result r;
	search(s, &cl, &o, &r);
	assert_true(r.best >= 0);
	const pb_dtp_config *b = &r.cfg[r.best];
	assert_int_equal(b->uneven, 1);
	assert_true(b->ok && b->fits);

	/* the FLOPs choice of the same seed, costed with the same cache rules */
	pb_error err = {0};
	const pb_graph *g = r.g;
	assert_int_equal(pb_dtp_search_reload(&o, r.batch / b->m, &g, &err), PB_OK);
	pb_uneven_ctx x;
	assert_int_equal(pb_dtp_uneven_open(&x, g, &cl, &o, &err), PB_OK);
	pb_dtp_config f;
	memset(&f, 0, sizeof f);
	f.dp = b->dp;
	f.m = b->m;
	f.sched = PB_SCHED_1F1B;
	f.v = 1;
	f.uneven = 1;
	assert_int_equal(pb_dtp_uneven_split(&x, f.m, 0, &f, 1), 1);
	assert_int_equal(pb_dtp_uneven_eval(&x, &f, &err), PB_OK);
	assert_true(f.ok);
	assert_int_equal(pb_dtp_uneven_eval_improve(&x, &f, 0, &err), PB_OK);
	pb_dtp_uneven_close(&x);
	int differ = f.pp != b->pp;
	for (int k = 0; k < b->pp && !differ; k++)
		differ = f.stage_tp[k] != b->stage_tp[k];
	assert_true(differ);
	assert_true(b->step_time < f.step_time * (1 - 1e-9));
	/* and every even row */
	for (int i = 0; i < r.n; i++)
		if (!r.cfg[i].uneven && r.cfg[i].ok)
			assert_true(b->step_time < r.cfg[i].step_time);
	pb_dtp_search_result_free(&r);
	pb_cluster_free(&cl);
	pb_session_free(s);
}

/* --schedule interleaved on the 4-layer 196,608-word GPT, cluster-4x8: an
 * uneven interleaved row is the best; p x V chunks, chunk k on group k mod
 * p; its step is the interleaved formula with the slowest group's summed
 * chunk times; its plan has the row's step time, one group per chunk on its
 * device group's range, and the per-group sums of its chunks' times give the
 * row's slowest group. */
static void test_uneven_interleaved(void **state)
{
	(void)state;
	pb_cluster cl;
	pb_session *s = open_on(pathv, "layouts/cluster-4x8.lua", &cl);
	pb_error err = {0};
	pb_dtp_opts o;
	opts_for(&o, s, 16);
	assert_int_equal(pb_dtp_search_parse_schedule("interleaved", &o.sched, &o.v, &err), PB_OK);
	o.v = 0; /* V free */
	pb_dtp_result r;
	search(s, &cl, &o, &r);
	assert_true(r.best >= 0);
	const pb_dtp_config *b = &r.cfg[r.best];
	assert_int_equal(b->uneven, 1);
	assert_int_equal(b->sched, PB_SCHED_INTERLEAVED);
	assert_true(b->v >= 2 && b->ok && b->fits);
	for (int i = 0; i < r.n; i++) {
		const pb_dtp_config *c = &r.cfg[i];
		assert_int_equal(c->sched, PB_SCHED_INTERLEAVED);
		if (!c->uneven && c->ok)
			assert_true(b->step_time < c->step_time);
	}
	int p = b->pp, V = b->v, m = b->m, nc = p * V;
	assert_int_equal(m % p, 0);
	for (int k = 1; k < nc; k++)
		assert_true(b->stage_end[k] > b->stage_end[k - 1]);
	assert_true(b->stage_end[0] > 0);
	assert_true(close_to(b->step_time, (b->slowest + V * b->p2p) * (m + (double)(p - 1) / V) +
	                                       b->grad_exposed));
	assert_true(close_to(b->bubble, (double)(p - 1) / ((double)V * m + p - 1)));
	assert_true(b->bound > 0 && b->bound <= b->step_time);

	pb_plan *plan = NULL;
	const pb_graph *g = r.g;
	int rc = pb_dtp_plan(&g, &cl, &o, b, r.batch, &r, &plan, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	assert_true(close_to(pb_plan_metric(plan, "step_time", 0), b->step_time));
	assert_int_equal(plan->n_groups, nc);
	double gt[PB_DTP_UNEVEN_MAX] = {0}, slowest = 0;
	const json_t *st = json_object_get(plan->detail, "stages");
	assert_int_equal(json_array_size(st), (size_t)nc);
	for (int k = 0; k < nc; k++) {
		int first, n;
		pb_dtp_plan_group_devices(b, k % p, &first, &n);
		assert_int_equal(plan->groups[k].first_unit, first);
		assert_int_equal(plan->groups[k].n_units, n);
		const json_t *ch = json_array_get(st, (size_t)k);
		assert_int_equal(json_integer_value(json_object_get(ch, "stage")), k % p);
		gt[k % p] += json_number_value(json_object_get(ch, "time"));
	}
	for (int k = 0; k < p; k++)
		slowest = fmax(slowest, gt[k]);
	assert_true(fabs(slowest - b->slowest) <= 1e-9 * b->slowest);
	pb_plan_free(plan);
	pb_dtp_search_result_free(&r);
	pb_cluster_free(&cl);
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_interleave_v3),
	    cmocka_unit_test(test_interleave_layers_cap),
	    cmocka_unit_test(test_uneven_pays),
	    cmocka_unit_test(test_uneven_not_paying),
	    cmocka_unit_test(test_uneven_milp_degrees),
	    cmocka_unit_test(test_uneven_interleaved),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
