/* test_rl.c — the REINFORCE agent: gradients against finite differences,
 * Adam with clipping, checkpoints (round trip, refusal, corruption),
 * determinism per seed, learning on a small instance, action masks. */
#include "pb_test.h"

#include <limits.h>

#include <unistd.h>

#include "partition/chain/baselines.h"
#include "partition/chain/env.h"
#include "partition/chain/exact.h"
#include "partition/chain/chain_problem.h"
#include "partition/rl/rl_policy.h"
#include "partition/rl/rl_reinforce.h"

static double sample_loss(const pb_rl_policy *p, const double *x, const unsigned char *mask,
                          int action, double adv, double beta)
{
	double h[64], prob[16], H = 0;
	pb_rl_policy_forward(p, x, mask, h, prob);
	for (int k = 0; k < p->n_out; k++)
		if (mask[k] && prob[k] > 0)
			H -= prob[k] * log(prob[k]);
	return -adv * log(prob[action]) - beta * H;
}

/* Backward pass against central differences of the loss, for a network of
 * n_pos positions with n_types logits each (n_pos = 1: a plain MLP). */
static void gradient_check(int n_pos, int n_types, const unsigned char *mask, int action)
{
	pb_rl_policy *p = pb_rl_policy_new(6, 5, n_types, n_pos, 77);
	assert_int_equal(p->n_out, n_pos * n_types);
	assert_int_equal(p->n_params, 6 * 5 + 5 + n_types * 5 + n_types);
	uint64_t rs = 3;
	/* Larger output weights than the initialisation, for a non-flat softmax. */
	for (int i = 0; i < p->n_params; i++)
		p->w[i] = 2 * pb_rl_uniform(&rs) - 1;
	double x[6 * 4];
	for (int i = 0; i < 6 * n_pos; i++)
		x[i] = 2 * pb_rl_uniform(&rs) - 1;
	double adv = 0.7, beta = 0.05;
	double *grad = calloc((size_t)p->n_params, sizeof *grad);
	double h[64], prob[16], scratch[64];
	pb_rl_policy_forward(p, x, mask, h, prob);
	double sum = 0;
	for (int k = 0; k < p->n_out; k++) {
		if (!mask[k])
			assert_true(prob[k] == 0);
		sum += prob[k];
	}
	assert_true(fabs(sum - 1) < 1e-12);
	double loss = pb_rl_policy_backward(p, x, mask, h, prob, action, adv, beta, grad, scratch);
	assert_true(fabs(loss - sample_loss(p, x, mask, action, adv, beta)) < 1e-12);
	double worst = 0, gnorm = 0;
	for (int i = 0; i < p->n_params; i++) {
		double w0 = p->w[i], eps = 1e-6;
		p->w[i] = w0 + eps;
		double lp = sample_loss(p, x, mask, action, adv, beta);
		p->w[i] = w0 - eps;
		double lm = sample_loss(p, x, mask, action, adv, beta);
		p->w[i] = w0;
		double num = (lp - lm) / (2 * eps);
		double e = fabs(num - grad[i]) / fmax(1e-6, fabs(num) + fabs(grad[i]));
		if (e > worst)
			worst = e;
		gnorm += grad[i] * grad[i];
	}
	if (worst > 1e-5)
		fail_msg("gradient check (%d positions): worst relative error %g", n_pos, worst);
	assert_true(gnorm > 1e-6); /* the check compared real gradients */
	free(grad);
	pb_rl_policy_free(p);
}

static void test_gradient_check(void **state)
{
	unsigned char dense[8] = {1, 0, 1, 1, 0, 1, 1, 1};
	gradient_check(1, 8, dense, 3);
	/* Shared over 3 positions, actions type * 3 + position; position 1 has
	 * every action masked, so its hidden units must get no gradient. */
	unsigned char shared[12] = {1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1};
	gradient_check(3, 4, shared, 6);
}

static void test_shared_positions(void **state)
{
	/* The same input at two positions gives the same logits there: with
	 * x_0 = x_2 the probabilities of actions (k, 0) and (k, 2) are equal,
	 * and swapping the inputs swaps the probabilities. */
	pb_rl_policy *p = pb_rl_policy_new(4, 3, 4, 3, 9);
	uint64_t rs = 5;
	for (int i = 0; i < p->n_params; i++)
		p->w[i] = 2 * pb_rl_uniform(&rs) - 1;
	double x[12] = {0.1, -0.4, 0.9, 0.3, 0.5, 0.5, -0.2, 0.7, 0.1, -0.4, 0.9, 0.3};
	double h[9], prob[12];
	pb_rl_policy_forward(p, x, NULL, h, prob);
	for (int k = 0; k < 4; k++)
		assert_true(fabs(prob[k * 3] - prob[k * 3 + 2]) < 1e-15);
	double y[12], q[12];
	memcpy(y, x + 4, 4 * sizeof *y); /* positions 0 and 1 swapped */
	memcpy(y + 4, x, 4 * sizeof *y);
	memcpy(y + 8, x + 8, 4 * sizeof *y);
	pb_rl_policy_forward(p, y, NULL, h, q);
	for (int k = 0; k < 4; k++) {
		assert_true(fabs(prob[k * 3] - q[k * 3 + 1]) < 1e-15);
		assert_true(fabs(prob[k * 3 + 1] - q[k * 3]) < 1e-15);
		assert_true(fabs(prob[k * 3] - prob[k * 3 + 1]) > 1e-6); /* inputs matter */
	}
	pb_rl_policy_free(p);
}

static void test_adam_clipping(void **state)
{
	pb_rl_adam a;
	assert_int_equal(pb_rl_adam_init(&a, 3, 0.1, 1.0), 0);
	double w[3] = {0, 0, 0}, g[3] = {30, -40, 0};
	double norm = pb_rl_adam_step(&a, w, g);
	assert_true(fabs(norm - 50) < 1e-9);
	/* First Adam step moves each weight by about lr against its gradient sign. */
	assert_true(fabs(w[0] + 0.1) < 1e-6 && fabs(w[1] - 0.1) < 1e-6 && w[2] == 0);
	pb_rl_adam_free(&a);
}

/* Random chain with skip edges; obscale multiplies the output bytes (100:
 * routing inside a group costs as much as its compute). */
static pb_part_problem *problem_ob(int m, int cores, double obscale)
{
	double macs[64], par[64], ob[64];
	int from[128], to[128], ne = 0;
	uint64_t s = 11;
	for (int i = 0; i < m; i++) {
		macs[i] = 1e5 * (1 + (double)(pb_rl_rand(&s) % 20));
		par[i] = 1000;
		ob[i] = (100 + (double)(pb_rl_rand(&s) % 400)) * obscale;
		if (i) {
			from[ne] = i - 1;
			to[ne++] = i;
		}
		if (i > 3 && i % 4 == 0) {
			from[ne] = i - 3;
			to[ne++] = i;
		}
	}
	pb_manycore h = pb_test_chip("rltest", cores, 1e9, 1e9, 1e8, 100);
	pb_part_problem *P;
	pb_error err = {0};
	assert_int_equal(pb_part_problem_synthetic(m, macs, par, ob, ne, from, to, &h, &P, &err),
	                 PB_OK);
	return P;
}

static pb_part_problem *problem(int m, int cores)
{
	return problem_ob(m, cores, 1);
}

static char *slurp(const char *path, long *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)*len);
	assert_int_equal(fread(b, 1, (size_t)*len, f), (size_t)*len);
	fclose(f);
	return b;
}

static void train_to(pb_part_problem *P, unsigned long seed, long episodes, const char *path)
{
	pb_rl_config c;
	pb_rl_config_default(&c);
	c.seed = seed;
	c.episodes = episodes;
	c.hidden = 16;
	pb_rl_trainer *T;
	pb_error err = {0};
	assert_int_equal(pb_rl_trainer_new(P, &c, NULL, &T, &err), PB_OK);
	assert_int_equal(pb_rl_trainer_step(T, 1000000, &err), PB_OK);
	assert_true(pb_rl_trainer_done(T));
	assert_int_equal(pb_rl_trainer_episodes(T), episodes);
	assert_int_equal(pb_rl_trainer_save(T, path, &err), PB_OK);
	pb_rl_trainer_free(T);
}

static void test_checkpoints_and_determinism(void **state)
{
	pb_part_problem *P = problem(20, 4);
	char a[64], b[64], c[64];
	snprintf(a, sizeof a, "/tmp/pb_rl_a_%d.ckpt", (int)getpid());
	snprintf(b, sizeof b, "/tmp/pb_rl_b_%d.ckpt", (int)getpid());
	snprintf(c, sizeof c, "/tmp/pb_rl_c_%d.ckpt", (int)getpid());
	train_to(P, 5, 30, a);
	train_to(P, 5, 30, b);
	train_to(P, 6, 30, c);
	long la, lb, lc;
	char *A = slurp(a, &la), *B = slurp(b, &lb), *C = slurp(c, &lc);
	assert_int_equal(la, lb);
	assert_memory_equal(A, B, (size_t)la); /* same seed, same network */
	assert_int_equal(la, lc);
	assert_true(memcmp(A, C, (size_t)la) != 0);
	/* Round trip. */
	pb_rl_policy *p;
	long ep;
	pb_error err = {0};
	assert_int_equal(pb_rl_checkpoint_load(a, 4, &p, &ep, &err), PB_OK);
	assert_int_equal(ep, 30);
	assert_int_equal(p->n_out, 12);
	assert_int_equal(p->n_pos, 3);
	char d[64];
	snprintf(d, sizeof d, "/tmp/pb_rl_d_%d.ckpt", (int)getpid());
	assert_int_equal(pb_rl_checkpoint_save(p, 4, ep, d, &err), PB_OK);
	long ld;
	char *D = slurp(d, &ld);
	assert_int_equal(ld, la);
	assert_memory_equal(A, D, (size_t)la);
	/* A NaN or huge parameter, saved with a valid checksum (as a diverged
	 * run would), is refused: the policy's probabilities would be NaN
	 * (found by tests/fuzz/fuzz_rl_checkpoint.c). */
	const double bad_weights[] = {NAN, INFINITY, -2e6};
	for (size_t k = 0; k < sizeof bad_weights / sizeof *bad_weights; k++) {
		double w = p->w[3];
		p->w[3] = bad_weights[k];
		assert_int_equal(pb_rl_checkpoint_save(p, 4, ep, d, &err), PB_OK);
		pb_rl_policy *bad = NULL;
		assert_int_equal(pb_rl_checkpoint_load(d, 4, &bad, &ep, &err), PB_EINPUT);
		assert_null(bad);
		assert_non_null(strstr(err.msg, "parameter 3"));
		assert_non_null(strstr(err.msg, "not a trained network"));
		p->w[3] = w;
	}
	/* An episode counter near 2^63 with a valid checksum is refused: the
	 * trainer counts on from it (UBSan aborted on the overflow; a release
	 * build saved a negative counter). Issue 39. */
	const long bad_episodes[] = {LONG_MAX, LONG_MAX - 10, -1, (1L << 40) + 1};
	for (size_t k = 0; k < sizeof bad_episodes / sizeof *bad_episodes; k++) {
		assert_int_equal(pb_rl_checkpoint_save(p, 4, bad_episodes[k], d, &err), PB_OK);
		pb_rl_policy *bad = NULL;
		assert_int_equal(pb_rl_checkpoint_load(d, 4, &bad, &ep, &err), PB_EINPUT);
		assert_null(bad);
		assert_non_null(strstr(err.msg, "episode counter"));
	}
	assert_int_equal(pb_rl_checkpoint_save(p, 4, 1L << 40, d, &err), PB_OK);
	pb_rl_policy *edge = NULL;
	assert_int_equal(pb_rl_checkpoint_load(d, 4, &edge, &ep, &err), PB_OK);
	assert_int_equal(ep, 1L << 40);
	pb_rl_policy_free(edge);
	pb_rl_policy_free(p);
	/* Another core count is refused by name. */
	assert_int_equal(pb_rl_checkpoint_load(a, 16, &p, &ep, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "trained for 4 cores"));
	pb_part_problem *P16 = problem(20, 16);
	pb_rl_config cfg;
	pb_rl_config_default(&cfg);
	pb_rl_trainer *T = NULL;
	assert_int_equal(pb_rl_trainer_new(P16, &cfg, a, &T, &err), PB_EINPUT);
	assert_null(T);
	pb_part_problem_free(P16);
	/* Corruption: flip one parameter byte. */
	A[60] ^= 0x40;
	FILE *f = fopen(d, "wb");
	fwrite(A, 1, (size_t)la, f);
	fclose(f);
	assert_int_equal(pb_rl_checkpoint_load(d, 4, &p, &ep, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "checksum"));
	/* Truncation and garbage. */
	f = fopen(d, "wb");
	fwrite(B, 1, (size_t)lb - 9, f);
	fclose(f);
	assert_int_equal(pb_rl_checkpoint_load(d, 4, &p, &ep, &err), PB_EINPUT);
	f = fopen(d, "wb");
	fputs("hello, not a checkpoint at all........................................", f);
	fclose(f);
	assert_int_equal(pb_rl_checkpoint_load(d, 4, &p, &ep, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "magic"));
	assert_int_equal(pb_rl_checkpoint_load("/nonexistent/x.ckpt", 4, &p, &ep, &err), PB_EINPUT);
	/* A version 1 checkpoint (the dense network) is refused by name. */
	memcpy(D, B, (size_t)lb);
	D[8] = 1;
	f = fopen(d, "wb");
	fwrite(D, 1, (size_t)lb, f);
	fclose(f);
	assert_int_equal(pb_rl_checkpoint_load(d, 4, &p, &ep, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "version 1"));
	/* So is version 2 (an agent that read the exact optimum as an input). */
	D[8] = 2;
	f = fopen(d, "wb");
	fwrite(D, 1, (size_t)lb, f);
	fclose(f);
	assert_int_equal(pb_rl_checkpoint_load(d, 4, &p, &ep, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "version 2"));
	assert_non_null(strstr(err.msg, "optimum"));
	/* Continue training from a checkpoint. */
	assert_int_equal(pb_rl_trainer_new(P, &cfg, b, &T, &err), PB_OK);
	assert_int_equal(pb_rl_trainer_step(T, 5, &err), PB_OK);
	pb_rl_trainer_free(T);
	free(A);
	free(B);
	free(C);
	free(D);
	remove(a);
	remove(b);
	remove(c);
	remove(d);
	pb_part_problem_free(P);
}

static void test_learns_small_instance(void **state)
{
	pb_part_problem *P = problem(24, 4);
	double opt;
	pb_error err = {0};
	assert_int_equal(pb_part_exact_solve(P, &opt, NULL, NULL, &err), PB_OK);
	int eq[4];
	pb_part_equal(P, eq);
	pb_part_eval ev;
	pb_part_evaluate(P, eq, &ev, NULL);
	pb_rl_config c;
	pb_rl_config_default(&c);
	c.episodes = 400;
	c.hidden = 16;
	c.init = PB_RL_INIT_EQUAL;
	pb_rl_trainer *T;
	assert_int_equal(pb_rl_trainer_new(P, &c, NULL, &T, &err), PB_OK);
	assert_int_equal(pb_rl_trainer_step(T, 400, &err), PB_OK);
	double best = pb_rl_trainer_best_time(T);
	if (best > opt * 1.02)
		fail_msg("agent best %.6g vs optimum %.6g (equal split %.6g)", best, opt,
		         ev.max_time);
	assert_true(best >= opt * (1 - 1e-9));
	assert_true(pb_part_state_valid(P, pb_rl_trainer_best(T), &err));
	pb_rl_trainer_free(T);
	pb_part_problem_free(P);
}

/* Restarts start from a centre, the best since its last reset. Without
 * resets it is the best; with them, a centre that has not improved for
 * `reset` episodes starts over from the start (there, worse than the best),
 * while the best is kept and never worsens. (8 cores: on 4 the restarts'
 * retime, tune and regroup find the best again within the episode of the
 * reset, so the centre is never seen apart from it between episodes.) */
static void test_reset_centre(void **state)
{
	pb_part_problem *P = problem(48, 8);
	pb_error err = {0};
	for (int reset = 0; reset <= 5; reset += 5) {
		pb_rl_config c;
		pb_rl_config_default(&c);
		c.episodes = 200;
		c.hidden = 8;
		c.init = PB_RL_INIT_EQUAL;
		c.reset = reset;
		pb_rl_trainer *T;
		assert_int_equal(pb_rl_trainer_new(P, &c, NULL, &T, &err), PB_OK);
		double prev = pb_rl_trainer_best_time(T);
		int apart = 0;
		for (int e = 0; e < 200; e++) {
			assert_int_equal(pb_rl_trainer_step(T, 1, &err), PB_OK);
			double best = pb_rl_trainer_best_time(T);
			assert_true(best <= prev);
			prev = best;
			const int *ctr = pb_rl_trainer_centre(T);
			assert_true(pb_part_state_valid(P, ctr, &err));
			pb_part_eval ev;
			pb_part_evaluate(P, ctr, &ev, NULL);
			assert_true(ev.max_time >= best * (1 - 1e-12));
			apart += ev.max_time > best * (1 + 1e-9);
			if (!reset)
				assert_memory_equal(ctr, pb_rl_trainer_best(T),
				                    (size_t)P->n * sizeof *ctr);
		}
		if (reset && apart == 0)
			fail_msg("reset %d: the centre never started over", reset);
		pb_rl_trainer_free(T);
	}
	pb_part_problem_free(P);
}

/* The method's actions never take a core away from the first group. From a
 * start whose first group holds 7 of 8 cores, an agent without restarts from
 * the best keeps that group; the default restarts (groups broken into single
 * cores) let it re-form the groups and get within 2% of the optimum. */
static void test_restarts_reform_groups(void **state)
{
	pb_part_problem *P = problem_ob(32, 8, 100);
	double opt;
	pb_error err = {0};
	assert_int_equal(pb_part_exact_solve(P, &opt, NULL, NULL, &err), PB_OK);
	int start[8] = {0, 0, 0, 0, 0, 0, 4, 28};
	double best[2];
	for (int with = 0; with < 2; with++) {
		pb_rl_config c;
		pb_rl_config_default(&c);
		c.episodes = 300;
		c.hidden = 8;
		c.step_limit = 16;
		c.init_state = start;
		c.restart_best = with ? 0.8 : 0.0;
		pb_rl_trainer *T;
		assert_int_equal(pb_rl_trainer_new(P, &c, NULL, &T, &err), PB_OK);
		assert_int_equal(pb_rl_trainer_step(T, 300, &err), PB_OK);
		const int *b = pb_rl_trainer_best(T);
		assert_true(pb_part_state_valid(P, b, &err));
		int first = 0;
		while (b[first] == 0)
			first++;
		if (!with)
			assert_true(first >= 6); /* group 0 still has 7 or 8 cores */
		best[with] = pb_rl_trainer_best_time(T);
		pb_rl_trainer_free(T);
	}
	if (best[1] > 1.02 * opt || best[0] <= 1.02 * opt)
		fail_msg("optimum %.6g: without restarts %.6g, with %.6g", opt, best[0], best[1]);
	pb_part_problem_free(P);
}

/* A broken window: its groups become single-core groups holding all their
 * layers (at least one each, split by MACs), the rest of the state is kept,
 * and the focus spans the pairs from the boundary before the left neighbour
 * group to the boundary after the right neighbour group. */
/* Largest time among groups g0..g1 of state ac. */
static double window_max(pb_part_problem *P, const int *ac, int g0, int g1)
{
	pb_part_group gs[16];
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, gs);
	double t = 0;
	for (int g = g0; g <= g1; g++)
		t = gs[g].time > t ? gs[g].time : t;
	return t;
}

/* Retiming a window: core counts, the window's layers and the rest stay;
 * the window's largest time never grows, and from lopsided cuts it drops to
 * within one layer of the best cut (checked against every cut of a
 * two-group window). */
static void test_retime_window(void **state)
{
	pb_part_problem *P = problem(40, 8);
	/* Groups: 2 cores / 4 layers, 1 core / 30 layers, 3 cores / 2 layers,
	 * 2 cores / 4 layers. Window = groups 1 and 2 (cores 2..5). */
	int gc[4] = {2, 1, 3, 2}, gl[4] = {4, 30, 2, 4}, ac[8], before[8];
	pb_part_state_from_groups(4, gc, gl, ac);
	memcpy(before, ac, sizeof ac);
	double t0 = window_max(P, ac, 1, 2);
	assert_int_equal(pb_rl_retime_window(P, ac, 2, 6), 1);
	for (int c = 0; c < 8; c++) /* core counts: the zeros stay zeros */
		assert_int_equal(ac[c] == 0, before[c] == 0);
	assert_int_equal(ac[0] + ac[1], 4);
	assert_int_equal(ac[6] + ac[7], 4);
	assert_int_equal(ac[2] + ac[5], 32);
	double t1 = window_max(P, ac, 1, 2);
	assert_true(t1 < 0.5 * t0);
	/* Brute force over the window's single cut. */
	double best = INFINITY;
	for (int cut = 1; cut < 32; cut++) {
		int try[8];
		memcpy(try, before, sizeof try);
		try[2] = cut;
		try[5] = 32 - cut;
		double t = window_max(P, try, 1, 2);
		best = t < best ? t : best;
	}
	assert_true(t1 <= best * (1 + 1e-3));
	/* c0 inside a group, c1 - 1 not a group's last core, or one group:
	 * nothing changes. */
	memcpy(ac, before, sizeof ac);
	assert_int_equal(pb_rl_retime_window(P, ac, 4, 6), 0);
	assert_int_equal(pb_rl_retime_window(P, ac, 2, 5), 0);
	assert_int_equal(pb_rl_retime_window(P, ac, 3, 6), 0);
	assert_memory_equal(ac, before, sizeof ac);
	pb_part_problem_free(P);
}

/* Tuning a window's core counts: the groups, the window's layers and the
 * rest stay; the window's largest time reaches the best over every core
 * split and cut of a two-group window (brute force), and drops below what
 * the retime alone gives for the starting core counts. */
static void test_tune_window(void **state)
{
	pb_part_problem *P = problem(40, 8);
	/* Groups: 1 core / 4 layers, 1 core / 30 layers, 5 cores / 2 layers,
	 * 1 core / 4 layers. Window = groups 1 and 2 (cores 1..6). */
	int gc[4] = {1, 1, 5, 1}, gl[4] = {4, 30, 2, 4}, ac[8], before[8], ret[8];
	pb_part_state_from_groups(4, gc, gl, ac);
	memcpy(before, ac, sizeof ac);
	memcpy(ret, ac, sizeof ac);
	pb_rl_retime_window(P, ret, 1, 7);
	assert_int_equal(pb_rl_tune_window(P, ac, 1, 7, 8, 0), 1);
	assert_int_equal(ac[0], 4);
	assert_int_equal(ac[7], 4);
	int groups = 0, layers = 0;
	for (int c = 1; c < 7; c++)
		groups += ac[c] > 0, layers += ac[c];
	assert_int_equal(groups, 2);
	assert_int_equal(layers, 32);
	double t = window_max(P, ac, 1, 2), best = INFINITY;
	assert_true(t < window_max(P, ret, 1, 2) * (1 - 1e-6));
	for (int c = 1; c < 6; c++) /* brute force: c cores for the first group */
		for (int cut = 1; cut < 32; cut++) {
			int g2[4] = {1, c, 6 - c, 1}, l2[4] = {4, cut, 32 - cut, 4}, try[8];
			pb_part_state_from_groups(4, g2, l2, try);
			double w = window_max(P, try, 1, 2);
			best = w < best ? w : best;
		}
	assert_true(t <= best * (1 + 1e-3));
	/* Not whole groups, or one group: nothing changes. */
	memcpy(ac, before, sizeof ac);
	assert_int_equal(pb_rl_tune_window(P, ac, 1, 6, 8, 0), 0);
	assert_int_equal(pb_rl_tune_window(P, ac, 2, 7, 8, 0), 0);
	assert_int_equal(pb_rl_tune_window(P, ac, 2, 2, 8, 0), 0);
	assert_memory_equal(ac, before, sizeof ac);
	pb_part_problem_free(P);
}

/* Best largest time of a window on cores [c0, c0 + cores) holding `layers`
 * layers from layer a, over every split into groups (core counts and cuts),
 * by brute force; *groups gets the best's group count. */
static double window_brute(pb_part_problem *P, int a, int layers, int cores, int *groups)
{
	double best = INFINITY;
	for (unsigned comp = 0; comp < 1u << (cores - 1); comp++) { /* core cuts */
		int pc[16], k = 0, prev = 0;
		for (int c = 1; c <= cores; c++)
			if (c == cores || comp >> (c - 1) & 1)
				pc[k++] = c - prev, prev = c;
		if (k > layers)
			continue;
		int cut[16]; /* layer cuts: cut[0] < ... < cut[k-2], odometer */
		for (int i = 0; i < k - 1; i++)
			cut[i] = i + 1;
		for (;;) {
			double t = 0;
			for (int i = 0, s = 0; i < k; i++) {
				int e = i < k - 1 ? cut[i] : layers;
				pb_part_group g;
				pb_part_eval_group(P, a + s, a + e, pc[i], &g);
				t = g.time > t ? g.time : t;
				s = e;
			}
			if (t < best)
				best = t, *groups = k;
			int i = k - 2;
			while (i >= 0 && cut[i] == layers - (k - 1 - i))
				i--;
			if (i < 0)
				break;
			cut[i]++;
			for (int j = i + 1; j < k - 1; j++)
				cut[j] = cut[j - 1] + 1;
		}
	}
	return best;
}

/* Regrouping a window: with the split and merge moves the hill-climb also
 * changes the window's group count, never ends above the core moves alone,
 * and here (much data between layers, so routing favours small groups)
 * reaches the best split of the window over every group count, core count
 * and cut (brute force), which has more groups than the start's two, where
 * the core moves alone stay above it. */
static void test_regroup_window(void **state)
{
	pb_part_problem *P = problem_ob(24, 8, 100);
	int gc[4] = {1, 4, 2, 1}, gl[4] = {4, 3, 13, 4}, ac[8], only[8];
	pb_part_state_from_groups(4, gc, gl, ac);
	memcpy(only, ac, sizeof ac);
	pb_rl_tune_window(P, only, 1, 7, 8, 0);
	assert_int_equal(pb_rl_tune_window(P, ac, 1, 7, 8, 1), 1);
	assert_int_equal(ac[0], 4);
	assert_int_equal(ac[7], 4);
	int groups = 0, layers = 0, best_groups = 0;
	for (int c = 1; c < 7; c++)
		groups += ac[c] > 0, layers += ac[c];
	assert_int_equal(layers, 16);
	double t = window_max(P, ac, 1, groups), t_only = window_max(P, only, 1, 2);
	double best = window_brute(P, 4, 16, 6, &best_groups);
	assert_true(t <= t_only * (1 + 1e-12));
	assert_true(t <= best * (1 + 1e-3));
	assert_int_not_equal(groups, 2);
	assert_int_not_equal(best_groups, 2);
	assert_true(t_only > best * (1 + 1e-3));
	pb_part_problem_free(P);
}

static void test_break_window_and_focus(void **state)
{
	pb_part_problem *P = problem(32, 8);
	int gc[4] = {2, 3, 1, 2}, gl[4] = {8, 10, 6, 8}, ac[8], before[8];
	pb_part_state_from_groups(4, gc, gl, ac);
	memcpy(before, ac, sizeof ac);
	pb_part_group gs[8];
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, gs);
	assert_int_equal(ev.n_groups, 4);
	int lo = -7, hi = -7;
	/* Window = group 1 (cores 2..4, layers 8..17). */
	assert_int_equal(pb_rl_break_window(P, ac, gs, 4, 1, 1, 0, NULL, &lo, &hi), 1);
	assert_int_equal(lo, 0); /* the boundary before group 0 does not exist */
	assert_int_equal(hi, 5); /* the last pair of group 2 (core 5, core 6) */
	int sum = 0;
	for (int c = 2; c <= 4; c++) {
		assert_true(ac[c] >= 1);
		sum += ac[c];
	}
	assert_int_equal(sum, 10);
	for (int c = 0; c < 8; c++)
		if (c < 2 || c > 4)
			assert_int_equal(ac[c], before[c]);
	pb_error err = {0};
	assert_true(pb_part_state_valid(P, ac, &err));
	/* Layers split by MACs: no core holds more than its share plus one layer. */
	double m3 = (P->pmacs[18] - P->pmacs[8]) / 3, maxl = 0;
	for (int c = 2, a = 8; c <= 4; a += ac[c], c++) {
		double macs = P->pmacs[a + ac[c]] - P->pmacs[a];
		double biggest = 0;
		for (int l = a; l < a + ac[c]; l++)
			if (P->pmacs[l + 1] - P->pmacs[l] > biggest)
				biggest = P->pmacs[l + 1] - P->pmacs[l];
		assert_true(macs <= m3 + biggest * (1 + 1e-9) || ac[c] == 1);
		maxl = macs > maxl ? macs : maxl;
	}
	assert_true(maxl > 0);
	/* Window = groups 2..3: the right end is the last pair. */
	memcpy(ac, before, sizeof ac);
	assert_int_equal(pb_rl_break_window(P, ac, gs, 4, 2, 3, 0, NULL, &lo, &hi), 1);
	assert_int_equal(lo, 1); /* pair (core 1, core 2): before group 1 */
	assert_int_equal(hi, 6);
	for (int c = 5; c < 8; c++)
		assert_true(ac[c] >= 1);
	assert_true(pb_part_state_valid(P, ac, &err));
	/* A single-core window cannot be broken; the focus is still set. */
	memcpy(ac, before, sizeof ac);
	assert_int_equal(pb_rl_break_window(P, ac, gs, 4, 2, 2, 0, NULL, &lo, &hi), 0);
	assert_memory_equal(ac, before, sizeof ac);
	assert_int_equal(lo, 1);
	assert_int_equal(hi, 6);
	/* Re-cut into parts: groups 0..1 (5 cores, 18 layers) into 2 groups of
	 * 3 and 2 cores whose layers split where the MACs cross 3/5. */
	memcpy(ac, before, sizeof ac);
	assert_int_equal(pb_rl_break_window(P, ac, gs, 4, 0, 1, 2, NULL, &lo, &hi), 1);
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 5);
	assert_int_equal(ac[0], 0);
	assert_int_equal(ac[1], 0);
	assert_true(ac[2] >= 1);
	assert_int_equal(ac[3], 0);
	assert_int_equal(ac[2] + ac[4], 18);
	for (int c = 5; c < 8; c++)
		assert_int_equal(ac[c], before[c]);
	double cut = P->pmacs[0] + (P->pmacs[18] - P->pmacs[0]) * 3 / 5;
	assert_true(fabs(P->pmacs[ac[2]] - cut) <= fabs(P->pmacs[ac[2] + 1] - cut));
	assert_true(fabs(P->pmacs[ac[2]] - cut) <= fabs(P->pmacs[ac[2] - 1] - cut));
	assert_true(pb_part_state_valid(P, ac, &err));
	/* Given core counts {1, 4}: cut where the MACs cross 1/5; counts that do
	 * not add up to the window's cores fall back to the even split. */
	int pc[2] = {1, 4}, bad[2] = {2, 2}, even[8];
	memcpy(ac, before, sizeof ac);
	assert_int_equal(pb_rl_break_window(P, ac, gs, 4, 0, 1, 2, pc, &lo, &hi), 1);
	assert_true(ac[0] >= 1);
	for (int c = 1; c < 4; c++)
		assert_int_equal(ac[c], 0);
	assert_int_equal(ac[0] + ac[4], 18);
	cut = P->pmacs[0] + (P->pmacs[18] - P->pmacs[0]) / 5;
	assert_true(fabs(P->pmacs[ac[0]] - cut) <= fabs(P->pmacs[ac[0] + 1] - cut));
	assert_true(pb_part_state_valid(P, ac, &err));
	memcpy(ac, before, sizeof ac);
	memcpy(even, before, sizeof even);
	pb_rl_break_window(P, ac, gs, 4, 0, 1, 2, bad, &lo, &hi);
	pb_rl_break_window(P, even, gs, 4, 0, 1, 2, NULL, &lo, &hi);
	assert_memory_equal(ac, even, sizeof ac);
	/* parts >= cores is the single-core break. */
	int ac2[8];
	memcpy(ac, before, sizeof ac);
	memcpy(ac2, before, sizeof ac2);
	pb_rl_break_window(P, ac, gs, 4, 0, 1, 9, NULL, &lo, &hi);
	pb_rl_break_window(P, ac2, gs, 4, 0, 1, 0, NULL, &lo, &hi);
	assert_memory_equal(ac, ac2, sizeof ac);
	for (int c = 0; c < 5; c++)
		assert_true(ac[c] >= 1);
	/* The focus mask keeps exactly the actions of pairs lo..hi. */
	unsigned char mask[28];
	memset(mask, 1, sizeof mask);
	pb_rl_focus_mask(8, 2, 4, mask);
	for (int k = 0; k < 28; k++) {
		int type, pair;
		assert_true(pb_env_decode(8, k, &type, &pair));
		assert_int_equal(mask[k], pair >= 2 && pair <= 4);
	}
	memset(mask, 1, sizeof mask);
	pb_rl_focus_mask(8, 0, 6, mask); /* the whole chip: nothing masked */
	for (int k = 0; k < 28; k++)
		assert_int_equal(mask[k], 1);
	pb_part_problem_free(P);
}

typedef struct mask_probe {
	int calls;
	int n;
} mask_probe;

/* Allows only d actions on the first pair. */
static int only_d0(void *ud, const int *ac, int n, unsigned char *mask)
{
	mask_probe *m = ud;
	m->calls++;
	m->n = n;
	for (int k = 0; k < 4 * (n - 1); k++)
		if (k != pb_env_encode(n, PB_ACT_D, 0))
			mask[k] = 0;
	return 0;
}

static void test_action_mask(void **state)
{
	pb_part_problem *P = problem(24, 4);
	pb_rl_config c;
	pb_rl_config_default(&c);
	c.episodes = 20;
	c.hidden = 8;
	c.init = PB_RL_INIT_EQUAL;
	mask_probe probe = {0, 0};
	c.mask = only_d0;
	c.mask_ud = &probe;
	pb_rl_trainer *T;
	pb_error err = {0};
	assert_int_equal(pb_rl_trainer_new(P, &c, NULL, &T, &err), PB_OK);
	assert_int_equal(pb_rl_trainer_step(T, 20, &err), PB_OK);
	assert_true(probe.calls > 20);
	assert_int_equal(probe.n, 4);
	const int *best = pb_rl_trainer_best(T);
	int eq[4];
	pb_part_equal(P, eq);
	assert_true(best[2] == eq[2] && best[3] == eq[3]); /* only cores 0/1 changed */
	assert_true(best[0] >= eq[0]);
	pb_rl_trainer_free(T);
	pb_part_problem_free(P);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gradient_check),
	    cmocka_unit_test(test_shared_positions),
	    cmocka_unit_test(test_adam_clipping),
	    cmocka_unit_test(test_checkpoints_and_determinism),
	    cmocka_unit_test(test_learns_small_instance),
	    cmocka_unit_test(test_restarts_reform_groups),
	    cmocka_unit_test(test_reset_centre),
	    cmocka_unit_test(test_action_mask),
	    cmocka_unit_test(test_break_window_and_focus),
	    cmocka_unit_test(test_retime_window),
	    cmocka_unit_test(test_tune_window),
	    cmocka_unit_test(test_regroup_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
