/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * core.h - the collector's sampling core: process and thread initialisation of the sampler,
 * the per-thread byte countdown and its one fast-path helper, the slow paths the interposers
 * call (first call of a thread, sampling, sampled frees, re-arming after a rate change,
 * reentrant calls from inside the profiler), the stack and live tables under the table lock,
 * and the sampling switch and rate.
 *
 * Not the dump machinery (dump.h), not the statistics (stats.h), not the process life cycle
 * (lifecycle.h: constructor, fork, exit). It calls down only (tables, unwinder, sampler,
 * real allocator, doorbell, thread registry); where it needs something only the top can do
 * (start the background thread lazily, e.g. in a forked child) it calls the hook lifecycle.c
 * installs. Nothing here calls the host's malloc.
 */
#ifndef HEAPTAP_LIB_CORE_H
#define HEAPTAP_LIB_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "attrs.h"
#include "livetab.h"
#include "stacktab.h"
#include "tstate.h"

/* The outermost frame of every stack cut at prof_bt_max (its address + 1). */
void heaptap_truncated_stack(void);

/*
 * The fast path of every interposed allocation: when the request of c bytes does not reach the
 * next slow-path event, takes it from the countdown, counts it and returns 1; else returns 0
 * (call the slow path). `until` is one less than the bytes left (tstate.h), so `c - 1 < until`
 * passes exactly the requests of 1 <= c < bytes left; a request of 0 bytes wraps to the
 * largest value and goes slow, where it counts as 1 byte. The one place the countdown is
 * written on the fast path.
 */
static inline __attribute__((always_inline)) int core_fast_take(enum interposed_fn fn, uint64_t c)
{
	struct tstate *t = &tstate_tls;
	if (likely(c - 1 < t->until)) {
		t->until -= c;
		tstate_count(t, fn);
		return 1;
	}
	return 0;
}

/* The collector's sampling state. Written by core.c only; dump.c and stats.c read it (the
   tables and the sums under core_lock_tables, the rest with atomic loads). */
struct core_state {
	int enabled;             /* opt prof, and the tables exist */
	int active;              /* sampling switch (atomic) */
	int accum;               /* maintain alloc_* counts */
	int gdump;               /* dump on a new high-water mark */
	uint32_t gen;            /* bumped when every thread must re-arm (atomic) */
	uint64_t period;         /* R in bytes (atomic) */
	int64_t start_time_ns;
	struct stacktab stacks;  /* under the table lock */
	struct livetab live;     /* under the table lock */
	uint64_t live_bytes_fp;  /* sum of bytes_fp over live samples (table lock) */
	uint64_t peak_bytes_fp;  /* its maximum since start/reset */
	uint64_t live_samples;
	uint64_t samples;        /* sampled allocations since start */
	uint64_t dropped_stacks; /* samples dropped: no stack could be interned (budget, memory) */
	uint64_t dropped_live;   /* samples dropped: the live table refused them */
	uint64_t dropped_bytes_fp;/* the unbiased bytes those dropped samples stood for */
	uint64_t truncated_samples;/* samples whose stack was cut at prof_bt_max */
	uint64_t truncated_bytes_fp;/* the unbiased bytes they stood for */
	uint64_t unwind_failed;  /* samples whose stack could not be unwound at all */
	uint64_t moved_stacks;   /* stacks whose frames moved to an unloaded library's synthetic
	                            addresses at its dlclose (maps.h; table lock) */
	uint64_t reentrant;      /* calls made from inside the profiler, never sampled (atomic) */
	void (*on_event)(void);  /* the top's hook, called on slow-path events (core_set_hook) */
};

extern struct core_state core;

/*
 * Initialises the sampler if it is not yet: the real allocator, the options, the tables, the
 * unwinder, the thread-exit key (idempotent, thread-safe; cheap once done). Called by the
 * first slow-path call of the process, which may come before any constructor has run, and by
 * lifecycle_init. Returns 1 once initialised, 0 when called re-entrantly from inside its own
 * initialisation.
 */
int core_init(void);

/* Installs the hook the slow path calls on every event while it is set (lifecycle.c: start
   the background thread if it is not running). NULL removes it. */
void core_set_hook(void (*fn)(void));

/* The table lock (LOCKRANK_TABLES). */
void core_lock_tables(void);
void core_unlock_tables(void);

/* The slow paths. `fn` names the interposer for statistics. Each returns what the
   interposed function must return and never calls the host's malloc recursively. */
void *core_alloc_slow(enum interposed_fn fn, size_t nbytes, size_t align);
void *core_calloc_slow(size_t nmemb, size_t size);
/* free's slow path: p is not NULL and livetab_maybe_sampled(p) (free tested both). */
void core_free_slow(void *p);
/* free of p in the sampled-object zone's range (free's fast path tested it): off the tables,
   back to the zone, or to the real free when the zone did not hand it out. */
void core_zone_free(void *p);
/* 1 if the sampled-object zone is set up (prof_zone). */
int core_zone_on(void);
/* As core_alloc_slow, but the block comes from alloc(n, align) (a real operator new: it may
   throw, so call it only with a nothrow one); used where the allocator below is not malloc. */
void *core_alloc_slow_with(enum interposed_fn fn, size_t nbytes, size_t align,
                           void *(*alloc)(size_t, size_t));
/* Removes p from the tables if it was sampled (the caller saw livetab_maybe_sampled(p)),
   without freeing it. For operator delete over an allocator whose delete does not call free. */
void core_forget_slow(void *p);
void *core_realloc_slow(void *p, size_t nbytes);

/* dlclose(handle) through the real one: when it unloads the object, the object is recorded for
   later dumps and the frames the collector holds move to its synthetic addresses (maps.h). */
int core_dlclose(void *handle);

/* The sampling switch: sets it (0/1) and returns the old state; every thread re-arms. */
int core_set_active(int on);
int core_active(void);
/* The calling thread's own switch (jemalloc's thread.prof.active; on in every new thread): a
   thread with it off is never sampled while the process switch is on. Returns the old state. */
int core_set_thread_active(int on);
/* log2 of the current mean sample interval. */
unsigned core_lg_sample(void);
/* Forgets every sample and sets the interval to 2^lg_sample. The caller holds the dump lock
   (a dump must not read the tables meanwhile). 0, -EINVAL, or -ENOENT (profiling is off). */
int core_reset_tables(unsigned lg_sample);

/* Fork: prepare takes the table lock; release gives it back, in the parent and in the child
   alike (the tables, and the samples in them, stay valid in both). */
void core_fork_prepare(void);
void core_fork_release(void);

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

#endif
