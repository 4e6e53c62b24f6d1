/*
 * core.h - the collector's per-thread state and the slow paths the interposers call.
 *
 * interpose.c's fast path reads and decrements `core_tls.until` (bytes until the next
 * event) and forwards to the real allocator; everything else (first call of a thread,
 * sampling, sampled frees, re-arming after a rate change, reentrant calls from inside the
 * profiler) goes through the core_*_slow functions of core.c. Not the tables (stacktab.h,
 * livetab.h) and not the dump machinery (dump.c). Nothing here calls the host's malloc.
 */
#ifndef HEAPTAP_LIB_CORE_H
#define HEAPTAP_LIB_CORE_H

#include <stddef.h>
#include <stdint.h>

/* Code of the profiler's own frames: stripped from the front of every captured stack. */
#define HEAPTAP_TEXT __attribute__((section("heaptap_text"), noinline))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Which interposed function was called (statistics index). */
enum core_fn {
	FN_MALLOC, FN_FREE, FN_CALLOC, FN_REALLOC, FN_REALLOCARRAY, FN_POSIX_MEMALIGN,
	FN_ALIGNED_ALLOC, FN_MEMALIGN, FN_VALLOC, FN_PVALLOC, FN_USABLE_SIZE, FN_NEW, FN_DELETE,
	FN_COUNT
};

#define CORE_HIST_BUCKETS 48

/*
 * One thread's state; lives in initial-exec TLS (core_tls), registered with stats.c.
 * The fast path lets a request of n >= 1 bytes through when n - 1 < until (unsigned), then
 * subtracts n: `until` is one less than the bytes left before the next slow-path event, so
 * 0 means "go slow" and a request of 0 bytes (n - 1 wraps) always goes slow, without a branch
 * or a cmov for it. malloc's requests are counted only in malloc_hist (indexed by
 * floor(log2 n), 64 entries: no clamp), so the malloc fast path does one increment for both
 * its call count and its size histogram; stats.c adds malloc_hist into calls and hist.
 */
struct tstate {
	uint64_t until;        /* bytes before the next slow-path event, minus 1; 0 = go slow */
	uint64_t calls[FN_COUNT]; /* calls[FN_MALLOC] stays 0: see malloc_hist */
	uint64_t hist[CORE_HIST_BUCKETS]; /* requests by floor(log2(size)), except malloc's */
	uint64_t malloc_hist[64]; /* malloc requests by floor(log2(size)) */
	/* slow-path only below */
	uint64_t armed;        /* value `until` had when last armed (bytes consumed = armed - until) */
	uint64_t sample_left;  /* bytes before the next sample */
	uint64_t interval_left;/* bytes before this thread folds its count into the global one */
	uint64_t nbytes;       /* requested bytes allocated, folded so far on the slow path */
	uint64_t rng;          /* PRNG state */
	uint32_t depth;        /* reentrancy: > 0 while inside the profiler */
	uint32_t gen;          /* sampling generation this thread armed under */
	int state;             /* 0 new, 1 running, 2 exited */
	int registered;        /* has a slot in the thread registry */
};

extern __thread struct tstate core_tls __attribute__((tls_model("initial-exec")));

/* Bucket of a request size for the histogram: floor(log2(n)), clamped. */
static inline unsigned core_hist_bucket(size_t n)
{
	unsigned b = n ? 63u - (unsigned)__builtin_clzll((unsigned long long)n) : 0;
	return b < CORE_HIST_BUCKETS ? b : CORE_HIST_BUCKETS - 1;
}

/* Counts one request of c >= 1 bytes made through fn, where the fast paths count it. */
static inline void core_count(struct tstate *t, enum core_fn fn, uint64_t c)
{
	if (fn == FN_MALLOC) {
		t->malloc_hist[63u - (unsigned)__builtin_clzll((unsigned long long)c)]++;
	} else {
		t->calls[fn]++;
		t->hist[core_hist_bucket(c)]++;
	}
}

/* The slow paths (core.c). `fn` names the interposer for statistics. Each returns what the
   interposed function must return and never calls the host's malloc recursively. */
void *core_alloc_slow(enum core_fn fn, size_t nbytes, size_t align);
void *core_calloc_slow(size_t nmemb, size_t size);
/* free's slow path: p is not NULL and livetab_maybe_sampled(p) (free tested both). */
void core_free_slow(void *p);
/* As core_alloc_slow, but the block comes from alloc(n, align) (a real operator new: it may
   throw, so call it only with a nothrow one); used where the allocator below is not malloc. */
void *core_alloc_slow_with(enum core_fn fn, size_t nbytes, size_t align,
                           void *(*alloc)(size_t, size_t));
/* Removes p from the tables if it was sampled (the caller saw livetab_maybe_sampled(p)),
   without freeing it. For operator delete over an allocator whose delete does not call free. */
void core_forget_slow(void *p);
void *core_realloc_slow(void *p, size_t nbytes);

/* Records an unloaded object before dlclose(handle) runs (maps.c keeps it for later dumps). */
void core_note_dlclose(void *handle);

/* Makes every registered thread re-arm its countdown on its next allocation (after the rate
   or the active switch changed). */
void core_rearm_all(void);

/*
 * Exact byte counters of option stats_exact (else all zero and `on` is 0): the usable sizes
 * (real.malloc_usable_size, so the allocator's rounding included) of every block the real
 * allocator handed out and took back through heaptap since the collector started. In this
 * mode every allocation and free takes the slow path (the countdown stays 0 and the whole
 * free filter is pinned), so the fast paths need no test of their own. Atomics; `live` is
 * signed because a block allocated before the option was read may be freed later.
 */
struct core_exact {
	int on;                  /* set once at init, before any counting */
	uint64_t allocated;      /* sum of usable sizes of blocks handed out */
	uint64_t freed;          /* sum of usable sizes of blocks freed (realloc: the old block) */
	int64_t live;            /* allocated - freed, as counted */
	int64_t peak;            /* maximum of live */
};
extern struct core_exact core_exact;

/* Process-wide facts set at init. */
int64_t core_start_time_ns(void);

#endif
