/* test_rl_blind.c — the agent learns blind to the optimum and reports what
 * it added (issue 19): the same plan with and without the exact solve; its
 * best starts as its start and nothing else; the first-beat episode; the
 * budgets; one network trained on several models and used on another; the
 * shipped agents; the training plot's start panel. */
#include "pb_test.h"

#include <unistd.h>

#include "commands.h"
#include "session.h"
#include "partition/chain/baselines.h"
#include "partition/chain/chain_problem.h"
#include "partition/methods/partition.h"
#include "partition/rl/rl_policy.h"
#include "partition/rl/rl_reinforce.h"
#include "render/plot.h"

/* A random chain with skip edges on `cores` cores. */
static pb_part_problem *problem(int m, int cores)
{
	double macs[64], par[64], ob[64];
	int from[128], to[128], ne = 0;
	uint64_t s = 23;
	for (int i = 0; i < m; i++) {
		macs[i] = 1e5 * (1 + (double)(pb_rl_rand(&s) % 20));
		par[i] = 1000;
		ob[i] = 100 + (double)(pb_rl_rand(&s) % 400);
		if (i) {
			from[ne] = i - 1;
			to[ne++] = i;
		}
		if (i > 3 && i % 4 == 0) {
			from[ne] = i - 3;
			to[ne++] = i;
		}
	}
	pb_manycore h = pb_test_chip("blind", cores, 1e9, 1e9, 1e8, 100);
	pb_part_problem *P;
	pb_error err = {0};
	assert_int_equal(pb_part_problem_synthetic(m, macs, par, ob, ne, from, to, &h, &P, &err),
	                 PB_OK);
	return P;
}

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	assert_true(json_is_number(v));
	return json_number_value(v);
}

/* For the same seed the agent's plan is identical with and without the exact
 * solve: nothing of the optimum reaches it. Fresh and shipped agents both. */
static void test_same_plan_without_reference(void **state)
{
	const char *agents[] = {"--agent none", ""};
	for (int k = 0; k < 2; k++) {
		pb_session *s = pb_session_new();
		char line[256];
		snprintf(line, sizeof line,
		         "partition models/squeezenet1_1.onnx --layout layouts/manycore-16.lua "
		         "--method rl --episodes 60 --seed 7 --init equal %s --json",
		         agents[k]);
		json_t *with = pb_test_run_json(s, line);
		strcat(line, " --no-reference");
		json_t *without = pb_test_run_json(s, line);
		assert_true(json_equal(json_object_get(with, "arranged_core"),
		                       json_object_get(without, "arranged_core")));
		assert_true(json_is_number(json_object_get(with, "optimum")));
		assert_true(json_is_null(json_object_get(without, "optimum")) ||
		            !json_object_get(without, "optimum"));
		const json_t *rw = json_object_get(with, "rl"),
		             *ro = json_object_get(without, "rl");
		assert_true(num(rw, "gap") >= -1e-9);
		assert_true(json_is_null(json_object_get(ro, "gap")));
		assert_true(num(rw, "max_time") == num(ro, "max_time"));
		assert_true(json_equal(json_object_get(rw, "beat_start_episode"),
		                       json_object_get(ro, "beat_start_episode")));
		/* The report's start is the equal split's max(t). */
		json_t *eq = pb_test_run_json(s, "partition --method equal --no-reference --json");
		const json_t *st = json_object_get(with, "start");
		assert_string_equal(json_string_value(json_object_get(st, "method")), "equal");
		assert_true(fabs(num(st, "max_time") - num(eq, "max_time")) <=
		            1e-12 * num(eq, "max_time"));
		assert_true(num(rw, "max_time") <= num(st, "max_time"));
		json_decref(eq);
		json_decref(with);
		json_decref(without);
		pb_session_free(s);
	}
}

/* Before any episode the agent's best is its start, whatever the start (no
 * pack or greedy plan slips in); after episodes the first-beat episode is
 * set exactly when the best beat the start. */
static void test_best_starts_as_the_start(void **state)
{
	pb_part_problem *P = problem(40, 8);
	void (*base[])(const pb_part_problem *, int *) = {pb_part_balanced, NULL, pb_part_greedy,
	                                                  pb_part_equal, pb_part_pack};
	for (int init = 0; init <= PB_RL_INIT_PACK; init++) {
		int want[8];
		if (init == PB_RL_INIT_LOCAL) {
			pb_part_greedy(P, want);
			pb_part_local_search(P, want, 1 << 20);
		} else {
			base[init](P, want);
		}
		pb_part_eval ev;
		pb_part_evaluate(P, want, &ev, NULL);
		pb_rl_config c;
		pb_rl_config_default(&c);
		c.episodes = 150;
		c.init = init;
		c.hidden = 8;
		pb_rl_trainer *T;
		pb_error err = {0};
		assert_int_equal(pb_rl_trainer_new(P, &c, NULL, &T, &err), PB_OK);
		assert_memory_equal(pb_rl_trainer_best(T), want, sizeof want);
		pb_rl_report r;
		pb_rl_trainer_report(T, &r);
		assert_string_equal(r.start_method, pb_rl_init_name(init));
		assert_true(r.start_time == ev.max_time && r.best_time == ev.max_time);
		assert_int_equal(r.beat_episode, -1);
		assert_int_equal(pb_rl_trainer_step(T, 1000, &err), PB_OK);
		pb_rl_trainer_report(T, &r);
		assert_int_equal(r.episodes, 150);
		assert_true(r.best_time <= r.start_time);
		if (r.best_time < r.start_time * (1 - 1e-9)) {
			assert_true(r.beat_episode >= 1 && r.beat_episode <= 150);
			assert_true(r.beat_seconds >= 0 && r.beat_seconds <= r.seconds);
		} else {
			assert_int_equal(r.beat_episode, -1);
		}
		if (init == PB_RL_INIT_EQUAL) /* the equal split is far from balanced here */
			assert_true(r.beat_episode >= 1);
		pb_rl_trainer_free(T);
	}
	pb_part_problem_free(P);
}

/* --seconds alone trains until the CPU-time budget; --episodes caps. */
static void test_budgets(void **state)
{
	pb_part_problem *P = problem(40, 8);
	pb_rl_config c;
	pb_rl_config_default(&c);
	c.episodes = 0;
	c.seconds = 0.03;
	c.hidden = 8;
	pb_rl_trainer *T;
	pb_error err = {0};
	assert_int_equal(pb_rl_trainer_new(P, &c, NULL, &T, &err), PB_OK);
	long steps = 0;
	while (!pb_rl_trainer_done(T) && steps++ < 100000000)
		assert_int_equal(pb_rl_trainer_step(T, 50, &err), PB_OK);
	pb_rl_report r;
	pb_rl_trainer_report(T, &r);
	assert_true(r.seconds >= 0.03);
	assert_true(r.episodes > 0);
	assert_int_equal(r.budget_episodes, 0);
	assert_true(r.budget_seconds == 0.03);
	pb_rl_trainer_free(T);
	c.episodes = 9;
	c.seconds = 1000;
	assert_int_equal(pb_rl_trainer_new(P, &c, NULL, &T, &err), PB_OK);
	assert_int_equal(pb_rl_trainer_step(T, 1000, &err), PB_OK);
	assert_true(pb_rl_trainer_done(T));
	assert_int_equal(pb_rl_trainer_episodes(T), 9);
	pb_rl_trainer_free(T);
	pb_part_problem_free(P);
	/* The command reports both. */
	pb_session *s = pb_session_new();
	json_t *j = pb_test_run_json(s, "partition models/resnet18.onnx --layout "
	                                "layouts/manycore-16.lua --method rl --seconds 0.02 "
	                                "--no-reference --agent none --json");
	const json_t *rl = json_object_get(j, "rl"), *bu = json_object_get(rl, "budget");
	assert_true(num(bu, "seconds") == 0.02);
	assert_true(json_is_null(json_object_get(bu, "episodes")));
	assert_true(num(rl, "seconds") >= 0.02);
	assert_true(num(rl, "episodes") >= 1);
	json_decref(j);
	pb_session_free(s);
}

/* A loaded agent's rollout before the first episode is its work: its steps
 * and CPU time are counted (and its beat at "episode 0" is timed); a fresh
 * agent has none before its first episode. */
static void test_rollout_is_work(void **state)
{
	pb_part_problem *P = problem(60, 16);
	pb_rl_config c;
	pb_rl_config_default(&c);
	c.episodes = 2;
	c.init = PB_RL_INIT_EQUAL;
	pb_rl_trainer *T;
	pb_error err = {0};
	assert_int_equal(pb_rl_trainer_new(P, &c, "agents/manycore-16.ckpt", &T, &err), PB_OK);
	pb_rl_report r;
	pb_rl_trainer_report(T, &r);
	long s0 = pb_rl_trainer_steps(T);
	assert_true(s0 >= 1 && s0 <= 32); /* L = max(cores, 32) steps at most */
	assert_true(r.seconds > 0 && r.episodes == 0);
	if (r.beat_episode == 0)
		assert_true(r.beat_seconds == r.seconds);
	assert_int_equal(pb_rl_trainer_step(T, 2, &err), PB_OK);
	assert_true(pb_rl_trainer_steps(T) > s0);
	pb_rl_trainer_free(T);
	assert_int_equal(pb_rl_trainer_new(P, &c, NULL, &T, &err), PB_OK);
	pb_rl_trainer_report(T, &r);
	assert_int_equal(pb_rl_trainer_steps(T), 0);
	assert_true(r.seconds == 0);
	pb_rl_trainer_free(T);
	pb_part_problem_free(P);
}

/* train M1 M2 interleaves episodes and trains one network, which then works
 * on a third model it has never seen. */
static void test_train_several_models(void **state)
{
	char ck[64], one[64], line[512];
	snprintf(ck, sizeof ck, "/tmp/pb_blind_%d.ckpt", (int)getpid());
	snprintf(one, sizeof one, "/tmp/pb_blind1_%d.ckpt", (int)getpid());
	pb_session *s = pb_session_new();
	snprintf(line, sizeof line,
	         "train models/squeezenet1_1.onnx models/resnet18.onnx --layout "
	         "layouts/manycore-16.lua --episodes 40 --init equal --no-reference -o %s --json",
	         ck);
	json_t *j = pb_test_run_json(s, line);
	assert_int_equal(num(j, "episodes"), 40);
	const json_t *ms = json_object_get(j, "models");
	assert_int_equal(json_array_size(ms), 2);
	for (int k = 0; k < 2; k++) {
		const json_t *m = json_array_get(ms, (size_t)k);
		assert_int_equal(num(m, "episodes"), 20);
		assert_true(num(m, "max_time") <= num(json_object_get(m, "start"), "max_time"));
	}
	assert_non_null(
	    strstr(json_string_value(json_object_get(json_array_get(ms, 1), "model")), "resnet18"));
	json_decref(j);
	pb_rl_policy *p;
	long ep;
	pb_error err = {0};
	assert_int_equal(pb_rl_checkpoint_load(ck, 16, &p, &ep, &err), PB_OK);
	assert_int_equal(ep, 40);
	pb_rl_policy_free(p);
	/* The second model's episodes changed the network. */
	snprintf(line, sizeof line,
	         "train models/squeezenet1_1.onnx --layout layouts/manycore-16.lua --episodes 20 "
	         "--init equal --no-reference -o %s",
	         one);
	int rc;
	char *o = pb_test_run_cmd(s, line, &rc);
	assert_int_equal(rc, PB_OK);
	free(o);
	pb_rl_policy *q;
	assert_int_equal(pb_rl_checkpoint_load(ck, 16, &p, &ep, &err), PB_OK);
	assert_int_equal(pb_rl_checkpoint_load(one, 16, &q, &ep, &err), PB_OK);
	assert_true(memcmp(p->w, q->w, (size_t)p->n_params * sizeof *p->w) != 0);
	pb_rl_policy_free(p);
	pb_rl_policy_free(q);
	/* An unseen model. */
	snprintf(line, sizeof line,
	         "partition models/mobilenet_v2.onnx --method rl --agent %s --episodes 5 --json",
	         ck);
	j = pb_test_run_json(s, line);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "rl"), "agent")),
	                    ck);
	json_decref(j);
	/* --costs is for one model. */
	snprintf(
	    line, sizeof line,
	    "train models/squeezenet1_1.onnx models/resnet18.onnx --episodes 2 --costs x.jsonl "
	    "-o %s",
	    ck);
	o = pb_test_run_cmd(s, line, &rc);
	assert_int_equal(rc, PB_EUSAGE);
	assert_non_null(strstr(o, "single model"));
	free(o);
	remove(ck);
	remove(one);
	pb_session_free(s);
}

/* The shipped agents load for their layouts' core counts and are used by
 * default; --agent none starts fresh. */
static void test_shipped_agents(void **state)
{
	const char *lay[] = {"layouts/manycore-16.lua", "layouts/manycore-64.lua",
	                     "layouts/manycore-tight.lua"};
	const int cores[] = {16, 64, 32};
	char buf[256];
	for (int k = 0; k < 3; k++) {
		assert_int_equal(pb_partition_default_agent(lay[k], cores[k], buf, sizeof buf), 1);
		assert_non_null(strstr(buf, "agents/"));
		assert_int_equal(pb_partition_default_agent(lay[k], cores[k] + 1, buf, sizeof buf),
		                 0);
	}
	assert_int_equal(pb_partition_default_agent("layouts/hetero.lua", 16, buf, sizeof buf), 0);
	pb_session *s = pb_session_new();
	json_t *j = pb_test_run_json(s, "partition models/resnet18.onnx --layout "
	                                "layouts/manycore-16.lua --method rl --episodes 3 --json");
	const char *a = json_string_value(json_object_get(json_object_get(j, "rl"), "agent"));
	assert_non_null(a);
	assert_non_null(strstr(a, "agents/manycore-16.ckpt"));
	json_decref(j);
	j = pb_test_run_json(s, "partition --method rl --episodes 3 --agent none --json");
	assert_true(json_is_null(json_object_get(json_object_get(j, "rl"), "agent")));
	json_decref(j);
	int rc;
	char *o = pb_test_run_cmd(s, "partition --method rl --init nope", &rc);
	assert_int_equal(rc, PB_EUSAGE);
	assert_non_null(strstr(o, "balanced|local|greedy|equal|pack"));
	free(o);
	pb_session_free(s);
}

/* The training plot shows the agent's best against its start. */
static void test_plot_start_panel(void **state)
{
	json_t *recs = json_array();
	const double best[] = {2.0, 2.0, 1.5, 1.2};
	for (int i = 0; i < 4; i++)
		json_array_append_new(recs, json_pack("{s:i, s:f, s:f, s:f, s:f}", "episode", i + 1,
		                                      "reward", -best[i], "max_time", best[i],
		                                      "best_time", best[i], "start_time", 2.0));
	char *svg = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&svg, &len);
	pb_plot_opts o = {NULL, NAN, 900, NULL};
	pb_error err = {0};
	assert_int_equal(pb_plot_training(recs, "t.jsonl", &o, f, &err), PB_OK);
	fclose(f);
	assert_non_null(strstr(svg, "best_vs_start"));
	assert_non_null(strstr(svg, "first beat its start at episode 3"));
	free(svg);
	json_decref(recs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_same_plan_without_reference),
	    cmocka_unit_test(test_best_starts_as_the_start),
	    cmocka_unit_test(test_budgets),
	    cmocka_unit_test(test_train_several_models),
	    cmocka_unit_test(test_shipped_agents),
	    cmocka_unit_test(test_rollout_is_work),
	    cmocka_unit_test(test_plot_start_panel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
