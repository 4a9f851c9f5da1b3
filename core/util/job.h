/*
 * job.h — a long operation run in slices (the workbench's jobs).
 *
 * A job runs fn(arg) on its own coroutine (coro.h). Long loops anywhere in
 * core call pb_job_tick(): inside a job, once the job's slice has elapsed
 * since it was resumed, the tick yields back to pb_job_resume (the front end
 * then reads input and redraws, and resumes the job again); outside a job, or
 * on another coroutine's stack (GLPK's, nested in the job), it does nothing.
 * A tick costs one clock read. Cancelling only raises a flag: the job's loops
 * read it (pb_job_cancelled) and finish early; a job is never unwound.
 * A process forked while a job runs is outside every job: its ticks do
 * nothing.
 */
#ifndef PB_JOB_H
#define PB_JOB_H

typedef struct pb_job pb_job;

/* A job that will run fn(arg); it starts at the first resume. NULL when out
 * of memory. */
pb_job *pb_job_new(void (*fn)(void *arg), void *arg);
/* Runs the job until a tick after `slice` seconds, or its end; returns 1
 * once fn has returned. */
int pb_job_resume(pb_job *j, double slice);
/* Asks the job to stop early (pb_job_cancelled becomes 1 inside it). */
void pb_job_cancel(pb_job *j);
/* Seconds since the first resume. */
double pb_job_elapsed(const pb_job *j);
/* fn must have returned (or never started). */
void pb_job_free(pb_job *j);

/* Inside a job: yields when its slice is used up. Elsewhere: nothing. */
void pb_job_tick(void);
/* Inside a job, on its own stack: yields now, whatever is left of the slice (a
 * frame between two steps that each hold the thread long, e.g. two library calls
 * that cannot yield inside). Elsewhere: nothing. */
void pb_job_yield(void);
/* 1 inside a job (also on a coroutine nested in it) whose slice is used up:
 * code running on a nested coroutine (a library's callback) yields that
 * coroutine, and its resumer, back on the job's stack, calls pb_job_tick. */
int pb_job_due(void);
/* 1 inside a job that was asked to stop. */
int pb_job_cancelled(void);
/* 1 while a job's body runs (on its own stack or a nested coroutine's). */
int pb_job_running(void);

#endif
