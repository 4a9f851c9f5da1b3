/*
 * job.c — jobs on a coroutine, yielding at ticks (job.h).
 *
 * The running job is a file-scope pointer set by pb_job_resume for the time
 * its body runs; jobs run on the thread that resumes them (the workbench's
 * main thread), so it is never shared between threads. The stack is large
 * (solvers, GLPK and Lua run on it) but malloc'd memory is only committed
 * where it is touched.
 */
#include "util/job.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "util/coro.h"

#define JOB_STACK (64u << 20)

struct pb_job {
	pb_coro *co;
	double started;  /* monotonic seconds of the first resume, 0 before */
	double deadline; /* the current slice ends here */
	int cancelled;
};

static pb_job *running;

/* A process forked while a job runs (the shard's workers, the layout
 * process, the chain MILP's root) is not that job: were a tick there to
 * yield, the child would carry on as a copy of the front end, reading the
 * terminal and the parent's pipes. */
static void forget_in_child(void)
{
	running = NULL;
}

static void watch_forks(void)
{
	pthread_atfork(NULL, NULL, forget_in_child);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

pb_job *pb_job_new(void (*fn)(void *arg), void *arg)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, watch_forks);
	pb_job *j = calloc(1, sizeof *j);
	if (!j)
		return NULL;
	j->co = pb_coro_new(fn, arg, JOB_STACK);
	if (!j->co) {
		free(j);
		return NULL;
	}
	return j;
}

int pb_job_resume(pb_job *j, double slice)
{
	if (pb_coro_done(j->co))
		return 1;
	double t = now_s();
	if (j->started == 0)
		j->started = t;
	j->deadline = t + slice;
	pb_job *outer = running;
	running = j;
	int done = pb_coro_resume(j->co);
	running = outer;
	return done;
}

void pb_job_cancel(pb_job *j)
{
	j->cancelled = 1;
}

double pb_job_elapsed(const pb_job *j)
{
	return j->started > 0 ? now_s() - j->started : 0;
}

void pb_job_free(pb_job *j)
{
	if (!j)
		return;
	pb_coro_free(j->co);
	free(j);
}

void pb_job_tick(void)
{
	if (!running || pb_coro_current() != running->co || now_s() < running->deadline)
		return;
	pb_coro_yield(running->co);
}

void pb_job_yield(void)
{
	if (running && pb_coro_current() == running->co)
		pb_coro_yield(running->co);
}

int pb_job_due(void)
{
	return running && now_s() >= running->deadline;
}

int pb_job_cancelled(void)
{
	return running && running->cancelled;
}

int pb_job_running(void)
{
	return running != NULL;
}
