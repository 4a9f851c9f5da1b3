/*
 * coro.h — a stackful coroutine on the calling thread (ucontext), for
 * running a library loop that reports through callbacks (GLPK's branch and
 * bound) a bounded amount at a time: the callback yields, the next resume
 * continues it. No frame is ever unwound by a jump: the body always runs to
 * its end (a caller that gives up tells the body to stop and resumes it until
 * it has finished). With AddressSanitizer the stack switches are annotated
 * (__sanitizer_start/finish_switch_fiber).
 */
#ifndef PB_CORO_H
#define PB_CORO_H

#include <stddef.h>

typedef struct pb_coro pb_coro;

/* A coroutine that will run fn(arg) on its own stack of stack_bytes; it
 * starts at the first resume. NULL when out of memory. */
pb_coro *pb_coro_new(void (*fn)(void *arg), void *arg, size_t stack_bytes);
/* Runs the body until it yields or returns; returns 1 once it has returned. */
int pb_coro_resume(pb_coro *c);
/* From inside the body: back to the resume that is running it. */
void pb_coro_yield(pb_coro *c);
/* The coroutine whose body is running now (the innermost one), NULL on the
 * thread's own stack. */
pb_coro *pb_coro_current(void);
int pb_coro_started(const pb_coro *c);
int pb_coro_done(const pb_coro *c);
/* The body must have returned (or never started). */
void pb_coro_free(pb_coro *c);

#endif
