/*
 * test_job.c — jobs in slices (util/job.h): a tick yields once the slice is
 * used up and never outside a job or on a nested coroutine's stack; cancel
 * is seen inside; a command run as a job (step -n N on an attached solver)
 * advances N units across many slices and stops early when cancelled.
 * No timing asserts: slice 0 means "yield at every tick", a huge slice
 * "never".
 */
#include "pb_test.h"
#include "util/coro.h"
#include "util/job.h"

#include <sys/wait.h>
#include <unistd.h>

typedef struct counter {
	int ticks, done, saw_cancel, running_inside;
	int limit;
} counter;

static void count_body(void *arg)
{
	counter *c = arg;
	c->running_inside = pb_job_running();
	for (int i = 0; i < c->limit; i++) {
		c->ticks++;
		pb_job_tick();
		if (pb_job_cancelled()) {
			c->saw_cancel = 1;
			break;
		}
	}
	c->done = 1;
}

static void tick_yields_per_slice(void **state)
{
	(void)state;
	counter c = {.limit = 5};
	pb_job *j = pb_job_new(count_body, &c);
	assert_non_null(j);
	/* slice 0: every tick yields */
	for (int k = 1; k <= 5; k++) {
		assert_int_equal(pb_job_resume(j, 0.0), 0);
		assert_int_equal(c.ticks, k);
	}
	assert_int_equal(pb_job_resume(j, 0.0), 1);
	assert_true(c.done);
	assert_true(c.running_inside);
	assert_false(pb_job_running());
	pb_job_free(j);

	/* a slice far longer than the work: no yield at all */
	counter d = {.limit = 1000};
	j = pb_job_new(count_body, &d);
	assert_int_equal(pb_job_resume(j, 1e9), 1);
	assert_int_equal(d.ticks, 1000);
	pb_job_free(j);
}

static void tick_outside_is_a_no_op(void **state)
{
	(void)state;
	pb_job_tick(); /* would crash or hang if it tried to yield */
	assert_false(pb_job_cancelled());
	assert_false(pb_job_running());
}

static void cancel_is_seen_inside(void **state)
{
	(void)state;
	counter c = {.limit = 1000000};
	pb_job *j = pb_job_new(count_body, &c);
	assert_int_equal(pb_job_resume(j, 0.0), 0);
	pb_job_cancel(j);
	assert_false(pb_job_cancelled()); /* outside the job */
	assert_int_equal(pb_job_resume(j, 0.0), 1);
	assert_true(c.saw_cancel);
	assert_int_equal(c.ticks, 1);
	pb_job_free(j);
}

/* A coroutine nested in the job (as GLPK's is in the MILP's step): ticks on
 * its stack do not yield the job; its own yields go back to the job. */
typedef struct nested {
	pb_coro *inner;
	int inner_steps, outer_ticks;
} nested;

static void inner_body(void *arg)
{
	nested *n = arg;
	for (int i = 0; i < 3; i++) {
		pb_job_tick(); /* on the inner stack: no-op */
		n->inner_steps++;
		pb_coro_yield(n->inner);
	}
}

static void outer_body(void *arg)
{
	nested *n = arg;
	n->inner = pb_coro_new(inner_body, n, 1u << 20);
	while (!pb_coro_resume(n->inner)) {
		n->outer_ticks++;
		pb_job_tick(); /* on the job's stack: yields */
	}
	pb_coro_free(n->inner);
}

static void nested_coroutine(void **state)
{
	(void)state;
	nested n = {0};
	pb_job *j = pb_job_new(outer_body, &n);
	int resumes = 0;
	while (!pb_job_resume(j, 0.0))
		resumes++;
	assert_int_equal(n.inner_steps, 3);
	assert_int_equal(n.outer_ticks, 3);
	assert_int_equal(resumes, 3);
	pb_job_free(j);
}

/* step -n N as a job: N units over many slices; cancel stops it early. */
typedef struct step_job {
	pb_session *s;
	const char *line;
	char *out;
	int rc;
} step_job;

static void step_body(void *arg)
{
	step_job *sj = arg;
	sj->out = pb_test_run_cmd(sj->s, sj->line, &sj->rc);
}

static void step_command_as_job(void **state)
{
	(void)state;
	pb_session *s = pb_session_new();
	int rc;
	free(pb_test_run_cmd(s, "open models/resnet18.onnx", &rc));
	free(pb_test_run_cmd(s, "layout layouts/manycore-16.lua", &rc));
	free(pb_test_run_cmd(s, "partition --method local --start", &rc));
	assert_int_equal(rc, PB_OK);
	int before = s->solver->n_history;
	step_job sj = {s, "step -n 5", NULL, 0};
	pb_job *j = pb_job_new(step_body, &sj);
	int slices = 0;
	while (!pb_job_resume(j, 0.0))
		slices++;
	pb_job_free(j);
	assert_int_equal(sj.rc, PB_OK);
	/* one solver step per unit (unless the search ended first), and the job
	 * yielded after each */
	int steps = s->solver->n_history - before;
	assert_true(steps >= 1 && steps <= 5);
	assert_true(slices >= steps);
	free(sj.out);

	/* cancelled after its first slice: it stops and says after how many */
	free(pb_test_run_cmd(s, "partition --method rl --start --episodes 100000000", &rc));
	if (rc == PB_OK) {
		step_job sk = {s, "step -n 1000000", NULL, 0};
		j = pb_job_new(step_body, &sk);
		assert_int_equal(pb_job_resume(j, 0.0), 0);
		pb_job_cancel(j);
		while (!pb_job_resume(j, 0.0))
			;
		pb_job_free(j);
		assert_int_equal(sk.rc, PB_OK);
		assert_non_null(strstr(sk.out, "step: cancelled after "));
		assert_non_null(strstr(sk.out, " of 1000000 units"));
		free(sk.out);
	}
	pb_session_free(s);
}

/* A child forked inside a job (the shard's workers, the layout process, the
 * chain MILP's root) is not a job: a tick there must never yield, or the
 * child would go on as a copy of the front end (reading the terminal and the
 * parent's pipes). */
typedef struct forker {
	int fd; /* the pipe's write end */
} forker;

static void fork_body(void *arg)
{
	forker *f = arg;
	pid_t pid = fork();
	if (pid == 0) {
		pb_job_tick(); /* the slice is used up: a job would yield here */
		(void)!write(f->fd, pb_job_running() ? "r" : "c", 1);
		_exit(0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
}

static void tick_in_forked_child_is_a_no_op(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t parent = getpid();
	forker f = {p[1]};
	pb_job *j = pb_job_new(fork_body, &f);
	assert_non_null(j);
	int done = pb_job_resume(j, 0.0);
	if (getpid() != parent) { /* the child's tick yielded into this copy */
		(void)!write(p[1], "y", 1);
		_exit(0);
	}
	assert_int_equal(done, 1);
	close(p[1]);
	char buf[8] = {0};
	ssize_t n = read(p[0], buf, sizeof buf - 1);
	close(p[0]);
	assert_int_equal(n, 1);
	assert_string_equal(buf, "c");
	pb_job_free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(tick_yields_per_slice),
	    cmocka_unit_test(tick_outside_is_a_no_op),
	    cmocka_unit_test(cancel_is_seen_inside),
	    cmocka_unit_test(nested_coroutine),
	    cmocka_unit_test(tick_in_forked_child_is_a_no_op),
	    cmocka_unit_test(step_command_as_job),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
