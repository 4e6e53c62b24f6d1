/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tstate.h - one thread's state inside the collector: the byte countdown the fast paths
 * decrement, the per-thread call counters and size histogram, the sampler's per-thread part,
 * and the reentrancy guard that tells the profiler's own allocations from the host's.
 *
 * The struct lives in initial-exec TLS (no lazy TLS allocation that would call malloc);
 * core.c defines and arms it, threads.c keeps the registry of live ones. Everything here is
 * inline and async-signal-safe. Not the slow paths (core.h) nor the registry (threads.h).
 */
#ifndef HEAPTAP_LIB_TSTATE_H
#define HEAPTAP_LIB_TSTATE_H

#include <stddef.h>
#include <stdint.h>

/* Which interposed function was called (statistics index; stats.c names them). */
enum interposed_fn {
	FN_MALLOC, FN_FREE, FN_CALLOC, FN_REALLOC, FN_REALLOCARRAY, FN_POSIX_MEMALIGN,
	FN_ALIGNED_ALLOC, FN_MEMALIGN, FN_VALLOC, FN_PVALLOC, FN_USABLE_SIZE, FN_NEW, FN_DELETE,
	FN_COUNT
};

#define TSTATE_HIST_BUCKETS 48

/*
 * One thread's state. The fast path lets a request of n >= 1 bytes through when n - 1 < until
 * (unsigned), then subtracts n: `until` is one less than the bytes left before the next
 * slow-path event, so 0 means "go slow" and a request of 0 bytes (n - 1 wraps) always goes
 * slow, without a branch or a cmov for it. The fast paths count calls only: the size
 * histogram is kept on the slow path, and only with stats_exact, which sends every request
 * there (its increment on malloc's fast path, a bsr and a second read-modify-write, was ~1 %
 * of a malloc-heavy program's CPU time: docs/INTERNALS.md "Fast-path cost").
 */
struct tstate {
	uint64_t until;        /* bytes before the next slow-path event, minus 1; 0 = go slow */
	uint64_t calls[FN_COUNT]; /* calls per interposed function */
	uint64_t hist[TSTATE_HIST_BUCKETS]; /* requests by floor(log2(size)): stats_exact only */
	/* slow-path only below */
	uint64_t armed;        /* value `until` had when last armed (bytes consumed = armed - until) */
	uint64_t sample_left;  /* bytes before the next sample */
	uint64_t nbytes;       /* requested bytes allocated, folded so far on the slow path */
	uint64_t rng;          /* PRNG state */
	uint32_t depth;        /* reentrancy: > 0 while inside the profiler (tstate_enter) */
	uint32_t gen;          /* sampling generation this thread armed under */
	uint32_t serial;       /* this thread's number (1, 2, ...; 0 before its first slow-path call) */
	int thread_off;        /* this thread's own switch is off (jemalloc's thread.prof.active) */
	int state;             /* TSTATE_NEW, TSTATE_RUNNING, TSTATE_EXITED */
	int registered;        /* has a slot in the thread registry (threads.c) */
	uint32_t locks_held;   /* lock ranks held, a bit each (lockrank.h, debug builds) */
};

enum { TSTATE_NEW = 0, TSTATE_RUNNING = 1, TSTATE_EXITED = 2 };

extern __thread struct tstate tstate_tls __attribute__((tls_model("initial-exec")));

/* Bucket of a request size for the histogram: floor(log2(n)), clamped. */
static inline unsigned tstate_hist_bucket(size_t n)
{
	unsigned b = n ? 63u - (unsigned)__builtin_clzll((unsigned long long)n) : 0;
	return b < TSTATE_HIST_BUCKETS ? b : TSTATE_HIST_BUCKETS - 1;
}

/* Counts one call of fn (the fast paths' one counter). */
static inline __attribute__((always_inline)) void tstate_count(struct tstate *t,
                                                               enum interposed_fn fn)
{
	t->calls[fn]++;
}

/* Counts one request of c bytes in the size histogram (the slow path, under stats_exact). */
static inline void tstate_count_size(struct tstate *t, uint64_t c)
{
	t->hist[tstate_hist_bucket(c)]++;
}

/*
 * The reentrancy guard. Between tstate_enter and tstate_leave the calling thread is inside
 * the profiler: whatever it allocates (through libc, dlsym, pthread_create) goes
 * straight to the real allocator, unsampled and uncounted, and it never waits for the table
 * lock from a nested free. Brackets nest. Async-signal-safe.
 */
static inline void tstate_enter(void)
{
	tstate_tls.depth++;
}

static inline void tstate_leave(void)
{
	tstate_tls.depth--;
}

/* 1 while the calling thread is inside the profiler. */
static inline int tstate_inside(void)
{
	return tstate_tls.depth != 0;
}

#endif
