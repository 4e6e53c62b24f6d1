/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_cfi_objtab.c - unit test of the unwinder's table of loaded objects (lib/cfi.c), the path
 * a signal handler's walk takes where glibc has no _dl_find_object (before 2.35; forced here
 * with cfi_init(NULL)): a walk from a real signal's ucontext (cfi_backtrace_context in a
 * SIGUSR1 handler, three frames below main) never calls dl_iterate_phdr: another thread holds
 * its lock meanwhile, so a call would hang (alarm kills the test). Before the first
 * cfi_objects_refresh the table is empty: the walk steps frames by frame pointer (objtab_misses
 * and fallbacks counted) and caches nothing; after it the same walk finds every rule (no
 * fallback, no miss) and reaches main; a second refresh with nothing loaded changes nothing,
 * and one after a dlopen rebuilds the table.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "../../lib/cfi.h"
#include "check.h"

/* A thread that holds dl_iterate_phdr's lock (it waits inside the callback) while the handler
   walks: a walk that called dl_iterate_phdr would hang there (alarm: the test dies). */
static volatile int held, release_lock;

static int hold_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	(void)arg;
	held = 1;
	while (!release_lock)
		__asm__ volatile("pause" ::: "memory");
	return 1;
}

static void *holder(void *arg)
{
	dl_iterate_phdr(hold_cb, NULL);
	return arg;
}

static uintptr_t stack_hi;
#define MAXF 64
static uintptr_t pcs[MAXF];
static uint32_t depth;

static void on_usr1(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	(void)si;
	const ucontext_t *uc = ucv;
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	depth = cfi_backtrace_context(pcs, MAXF, (uintptr_t)uc->uc_mcontext.gregs[REG_RIP], sp,
	                              (uintptr_t)uc->uc_mcontext.gregs[REG_RBP], sp - 4096, stack_hi);
}

static volatile int sink;
__attribute__((noinline)) static void level3(void) { raise(SIGUSR1); sink++; }
__attribute__((noinline)) static void level2(void) { level3(); sink++; }
__attribute__((noinline)) static void level1(void) { level2(); sink++; }

/* 1 when one of pcs[0..depth) lies in main (its first 8 KiB hold the call to level1, sanitizer code included). */
static int reached_main(void)
{
	extern int main(void);
	for (uint32_t i = 0; i < depth; i++)
		if (pcs[i] > (uintptr_t)main && pcs[i] - (uintptr_t)main < 8192)
			return 1;
	fprintf(stderr, "main at %p:", (void *)main);
	for (uint32_t i = 0; i < depth; i++)
		fprintf(stderr, " %p", (void *)pcs[i]);
	fprintf(stderr, "\n");
	return 0;
}

int main(void)
{
	alarm(20);
	pthread_attr_t attr;
	void *addr;
	size_t size;
	pthread_getattr_np(pthread_self(), &attr);
	pthread_attr_getstack(&attr, &addr, &size);
	pthread_attr_destroy(&attr);
	stack_hi = (uintptr_t)addr + size;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	CHECK(cfi_init(NULL) == 0); /* no _dl_find_object: glibc before 2.35 */

	/* the table is empty: frame pointers, counted, nothing cached */
	struct cfi_counts c0, c1, c2;
	pthread_t t;
	pthread_create(&t, NULL, holder, NULL);
	while (!held)
		;
	cfi_get_counts(&c0);
	level1();
	cfi_get_counts(&c1);
	CHECK(c1.objtab_misses > c0.objtab_misses, "no miss counted");
	CHECK(c1.fallbacks > c0.fallbacks, "no frame-pointer fallback counted");
	CHECK(depth >= 1);

	release_lock = 1;
	pthread_join(t, NULL);
	CHECK(cfi_objects_refresh() == 1, "refresh did not build the table");
	held = release_lock = 0;
	pthread_create(&t, NULL, holder, NULL);
	while (!held)
		;
	level1();
	cfi_get_counts(&c2);
	CHECK(c2.objtab_misses == c1.objtab_misses, "misses %llu -> %llu with a full table",
	      (unsigned long long)c1.objtab_misses, (unsigned long long)c2.objtab_misses);
	CHECK(c2.fallbacks == c1.fallbacks, "the walk fell back with a full table (a failed rule was cached?)");
	CHECK(c2.parses > c1.parses, "no rule parsed after the refresh");
	CHECK(reached_main(), "the walk (depth %u) did not reach main", depth);
	uint32_t d1 = depth;

	/* warm: the cache answers, same walk */
	level1();
	CHECK(depth == d1);
	release_lock = 1;
	pthread_join(t, NULL);
	CHECK(cfi_objects_refresh() == 0, "a refresh with nothing loaded rebuilt the table");
	void *h = dlopen("libz.so.1", RTLD_NOW);
	if (h) {
		CHECK(cfi_objects_refresh() == 1, "a refresh after dlopen did not rebuild the table");
		dlclose(h);
	}
	/* the switch for glibc 2.35 and later: with _dl_find_object a refresh has nothing to do */
	return check_finish("lib_cfi_objtab");
}
