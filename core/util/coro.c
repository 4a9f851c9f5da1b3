/*
 * coro.c — stackful coroutine over ucontext (coro.h).
 *
 * resume: swapcontext(caller -> body); yield: swapcontext(body -> caller);
 * the body's trampoline marks the coroutine done and switches back one last
 * time (its stack is never resumed again). The trampoline receives the
 * coroutine through a file-scope pointer set just before the first switch
 * (makecontext only passes ints); coroutines run on the calling thread, so
 * that pointer is never shared between threads.
 */
#include "util/coro.h"

#include <stdlib.h>
#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#define PB_ASAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PB_ASAN_FIBERS 1
#endif
#endif
#ifdef PB_ASAN_FIBERS
#include <sanitizer/asan_interface.h>
#endif

struct pb_coro {
	ucontext_t caller, co;
	void *stack;
	size_t stack_bytes;
	void *fake_stack;
	/* the stack of the code that resumed it (AddressSanitizer's fiber
	 * bookkeeping), reported when the body is entered */
	const void *caller_bottom;
	size_t caller_size;
	pb_coro *prev; /* the coroutine running when it was resumed (NULL: none) */
	void (*fn)(void *);
	void *arg;
	int started, finished;
};

static pb_coro *starting;
static pb_coro *current; /* the coroutine whose body runs now */

pb_coro *pb_coro_new(void (*fn)(void *arg), void *arg, size_t stack_bytes)
{
	pb_coro *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->stack = malloc(stack_bytes);
	if (!c->stack) {
		free(c);
		return NULL;
	}
	c->stack_bytes = stack_bytes;
	c->fn = fn;
	c->arg = arg;
	return c;
}

static void switch_to_co(pb_coro *c)
{
	c->prev = current;
	current = c;
#ifdef PB_ASAN_FIBERS
	__sanitizer_start_switch_fiber(&c->fake_stack, c->stack, c->stack_bytes);
#endif
	swapcontext(&c->caller, &c->co);
#ifdef PB_ASAN_FIBERS
	__sanitizer_finish_switch_fiber(c->fake_stack, NULL, NULL);
#endif
}

static void switch_to_caller(pb_coro *c, int final)
{
	current = c->prev;
#ifdef PB_ASAN_FIBERS
	void *fs = NULL;
	__sanitizer_start_switch_fiber(final ? NULL : &fs, c->caller_bottom, c->caller_size);
	swapcontext(&c->co, &c->caller);
	__sanitizer_finish_switch_fiber(fs, &c->caller_bottom, &c->caller_size);
#else
	(void) final;
	swapcontext(&c->co, &c->caller);
#endif
}

static void trampoline(void)
{
	pb_coro *c = starting;
#ifdef PB_ASAN_FIBERS
	__sanitizer_finish_switch_fiber(NULL, &c->caller_bottom, &c->caller_size);
#endif
	c->fn(c->arg);
	c->finished = 1;
	switch_to_caller(c, 1);
}

int pb_coro_resume(pb_coro *c)
{
	if (c->finished)
		return 1;
	if (!c->started) {
		getcontext(&c->co);
		c->co.uc_stack.ss_sp = c->stack;
		c->co.uc_stack.ss_size = c->stack_bytes;
		c->co.uc_link = NULL;
		starting = c;
		makecontext(&c->co, trampoline, 0);
		c->started = 1;
	}
	switch_to_co(c);
	return c->finished;
}

void pb_coro_yield(pb_coro *c)
{
	switch_to_caller(c, 0);
}

pb_coro *pb_coro_current(void)
{
	return current;
}

int pb_coro_started(const pb_coro *c)
{
	return c->started;
}

int pb_coro_done(const pb_coro *c)
{
	return c->finished;
}

void pb_coro_free(pb_coro *c)
{
	if (!c)
		return;
	free(c->stack);
	free(c);
}
