/* test_dtp_uneven.c — the data x tensor x pipeline search beyond equal
 * stages: interleaving with V >= 3 chunks per device (dtp_interleave.c) on
 * generated GPTs over cluster-2x8. V = 3 is tried where pp x 3 chunks fit
 * the layers and is costed by the interleaved formula; V >= 4 only after V
 * beat V - 1; a fixed interleaved:3 gives the free search's numbers. */
#include "pb_test.h"

#include <unistd.h>

#include "model/gen_gpt.h"
#include "session.h"
#include "shard/dtp_search.h"

#define LAYOUT "layouts/cluster-2x8.lua"

static char path12[64], path6[64];

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
	    gen(path6, sizeof path6, "g6", 6, 256, 4000))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path12);
	unlink(path6);
	return 0;
}

static pb_session *open_session(const char *path, pb_cluster *cl)
{
	pb_session *s = pb_session_new();
	pb_error err = {0};
	assert_int_equal(pb_session_open_model(s, path, NULL, 0, &err), PB_OK);
	assert_int_equal(pb_session_open_layout(s, LAYOUT, &err), PB_OK);
	assert_int_equal(pb_cluster_from_hw(s->hw, cl, &err), PB_OK);
	return s;
}

static void opts_for(pb_dtp_opts *o, pb_session *s, long batch)
{
	pb_dtp_opts_default(o);
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
	rc = pb_dtp_add_operator(r, o, cl, &err);
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
	assert_int_equal(pb_dtp_count_blocks(s->graph), 12);
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
		double want = (c->slowest + V * c->p2p) * (m + (double)(p - 1) / V) + c->grad;
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
	assert_int_equal(pb_dtp_parse_schedule("interleaved:3", &f.sched, &f.v, &err), PB_OK);
	pb_dtp_result one;
	search(s, &cl, &f, &one);
	assert_int_equal(one.n, 1);
	assert_int_equal(one.cfg[0].v, 3);
	assert_true(close_to(one.cfg[0].step_time, c3->step_time));
	assert_true(close_to(one.cfg[0].memory, c3->memory));
	pb_dtp_result_free(&one);
	pb_dtp_result_free(&r);
	pb_cluster_free(&cl);
	pb_session_free(s);
}

/* 6 layers on 4 stages: 3 chunks per device would be 12 > 6 layers, so
 * interleaving stays at V = 2; --schedule 1f1b tries no interleaving. */
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
	pb_dtp_result_free(&r);
	opts_for(&o, s, 16);
	o.pp = 2;
	o.m = 8;
	o.sched = PB_SCHED_1F1B;
	search(s, &cl, &o, &r);
	for (int i = 0; i < r.n; i++)
		assert_int_equal(r.cfg[i].v, 1);
	pb_dtp_result_free(&r);
	pb_cluster_free(&cl);
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_interleave_v3),
	    cmocka_unit_test(test_interleave_layers_cap),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
