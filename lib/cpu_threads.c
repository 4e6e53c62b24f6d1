/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpu_threads.c - heaptap's pthread_create: while the CPU profiler samples, every new thread
 * starts through a trampoline that arms its CPU-time timer before the thread's own function
 * runs (so a short-lived thread is sampled from its first instruction, not from the next
 * rescan of /proc/self/task) and deletes it when the function returns.
 *
 * Not the sampler (cpu_sampler.c). While the profiler is off, pthread_create is passed
 * through untouched. The trampoline's two words come from the real allocator (inside the
 * reentrancy guard: never sampled); nothing else allocates.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "attrs.h"
#include "cpu_sampler.h"
#include "tstate.h"

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

struct tramp {
	void *(*fn)(void *);
	void *arg;
};

static create_fn next_create;

/* The frame every thread created while the CPU profiler samples starts in (it shows in CPU
   profiles between the C library's start_thread and the thread's function). */
__attribute__((noinline)) static void *heaptap_thread_start(void *p)
{
	struct tramp t = *(struct tramp *)p;
	tstate_enter();
	free(p);
	tstate_leave();
	cpu_sampler_thread_begin();
	void *ret = t.fn(t.arg);
	cpu_sampler_thread_end();
	__asm__ volatile("" ::: "memory"); /* not a tail call: the frame stays for the unwinder */
	return ret;
}

HEAPTAP_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                                  void *(*fn)(void *), void *arg)
{
	create_fn next = __atomic_load_n(&next_create, __ATOMIC_ACQUIRE);
	if (!next) {
		tstate_enter(); /* dlsym may allocate */
		next = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
		tstate_leave();
		if (!next)
			return EAGAIN;
		__atomic_store_n(&next_create, next, __ATOMIC_RELEASE);
	}
	if (!cpu_sampler_running())
		return next(th, attr, fn, arg);
	tstate_enter();
	struct tramp *t = malloc(sizeof *t);
	tstate_leave();
	if (!t)
		return next(th, attr, fn, arg);
	t->fn = fn;
	t->arg = arg;
	int rc = next(th, attr, heaptap_thread_start, t);
	if (rc != 0) {
		tstate_enter();
		free(t);
		tstate_leave();
	}
	return rc;
}
