/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * core.c - the sampling core of core.h: sampler initialisation, thread start and exit, the
 * per-thread byte countdown, the sampled-allocation and sampled-free slow paths that update
 * the stack and live tables under the table lock, the interval byte count, and the sampling
 * switch and rate.
 *
 * The fast paths are in interpose.c; dumps in dump.c; statistics in stats.c; the process life
 * cycle (constructor, fork, exit) in lifecycle.c. The table lock (LOCKRANK_TABLES) is never
 * held while calling the real allocator, unwinding or writing. Nothing here calls the host's
 * malloc.
 */
#include "core.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../base/outbuf.h"
#include "../profile/inproc/unbias.h"
#include "cpuprof.h"
#include "doorbell.h"
#include "livetab.h"
#include "lockrank.h"
#include "maps.h"
#include "options.h"
#include "peakprof.h"
#include "real.h"
#include "sampler.h"
#include "sampzone.h"
#include "stacktab.h"
#include "sys.h"
#include "threads.h"
#include "unwind.h"

struct core_state core;
struct core_exact core_exact;

static struct ranked_mutex table_lock = RANKED_MUTEX_INITIALIZER(LOCKRANK_TABLES);
static pthread_key_t thread_key;
static int init_state; /* 0 not started, 1 running, 2 done (atomic) */
static int log_once_live_full, log_once_stacks_full;
static int zone_on; /* the sampled-object zone is set up (prof_zone; written once at init) */
static uint64_t alloc_total;   /* bytes allocated, folded by threads (atomic) */
static uint64_t next_interval; /* alloc_total at which the next interval dump is due (atomic) */

/* "Never sample again" countdown: large but far from overflow. */
#define FAR ((uint64_t)1 << 62)

void core_lock_tables(void)
{
	lockrank_lock(&table_lock);
}

void core_unlock_tables(void)
{
	lockrank_unlock(&table_lock);
}

void core_set_hook(void (*fn)(void))
{
	__atomic_store_n(&core.on_event, fn, __ATOMIC_RELEASE);
}

/* ---- thread life ---- */

static void thread_exit(void *arg)
{
	struct tstate *t = arg;
	tstate_enter();
	threads_unregister(t);
	t->state = TSTATE_EXITED;
	t->until = core_exact.on ? 0 : FAR;
	t->armed = t->until;
	tstate_leave();
}

void core_fork_prepare(void)
{
	lockrank_lock(&table_lock);
}

void core_fork_release(void)
{
	lockrank_unlock(&table_lock);
}

int core_zone_on(void)
{
	return zone_on;
}

int core_init(void)
{
	int st = __atomic_load_n(&init_state, __ATOMIC_ACQUIRE);
	if (st == 2)
		return 1;
	st = 0;
	if (!__atomic_compare_exchange_n(&init_state, &st, 1, 0, __ATOMIC_ACQ_REL,
	                                 __ATOMIC_ACQUIRE)) {
		if (tstate_inside())
			return 0; /* re-entered from our own initialisation */
		while (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
		return 1;
	}
	tstate_enter();
	real_resolve();
	options_load();
	const struct options *o = options_get();
	core.start_time_ns = sys_now_ns();
	core.period = (uint64_t)1 << o->lg_prof_sample;
	core.active = o->prof_active;
	core.enabled = o->prof;
	core.accum = o->prof_accum;
	core.gdump = o->prof_gdump;
	core.gen = 1;
	if (core.enabled) {
		/* one frame more than prof_bt_max: a cut stack's [truncated] mark */
		if (stacktab_init(&core.stacks, o->prof_max_stacks, o->prof_bt_max + 1) ||
		    livetab_init(&core.live, o->prof_max_live)) {
			sys_log("cannot map the profiler's tables", " (profiling disabled)", NULL);
			core.enabled = 0;
		}
		/* cumulative counts (prof_accum) keep every stack; else a stack without live
		   samples is recycled (stacktab.h) */
		core.stacks.recycle = !o->prof_accum;
	}
	if (core.enabled && o->stats_exact) {
		/* every free slow from now on; every thread's countdown is already 0 or goes 0 */
		real_need_filter();
		livetab_filter_pin_all();
		__atomic_store_n(&core_exact.on, 1, __ATOMIC_RELEASE);
	}
	if (core.enabled && o->prof_zone && !o->stats_exact &&
	    sysconf(_SC_PAGESIZE) == (long)SAMPZONE_PAGE) {
		/* stats_exact counts real usable sizes: it keeps every block in the real allocator */
		uintptr_t zb = real.zone_base != SAMPZONE_OFF ? real.zone_base : sampzone_pick_base();
		sampzone_init(&sampzone_main, zb, SAMPZONE_SMALL_REGION,
		              SAMPZONE_SIZE - SAMPZONE_SMALL_REGION);
		sampzone_main.slab_next = SAMPZONE_SLAB; /* the first slot holds the bootstrap pool */
		__atomic_store_n(&real.zone_base, sampzone_main.base, __ATOMIC_RELEASE);
		zone_on = 1;
	}
	if (core.enabled) {
		unwind_init();
		pthread_key_create(&thread_key, thread_exit);
		if (o->lg_prof_interval >= 0)
			next_interval = (uint64_t)1 << o->lg_prof_interval;
	}
	if (o->verbose) {
		char num[24], pid[24];
		fmt_u64(num, core.period);
		fmt_u64(pid, (uint64_t)getpid());
		sys_log(core.enabled ? "profiling pid " : "profiling disabled in pid ", pid,
		        core.enabled ? (o->prof_prefix[0] ? "; dumps under prof_prefix" : "; no automatic dumps")
		                     : NULL);
		sys_log("mean sample interval R = ", num, " bytes");
	}
	tstate_leave();
	__atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
	return 1;
}

/* t's number, given on first need (its first sample, or a free before it ever allocated) */
static uint32_t thread_serial(struct tstate *t)
{
	static uint32_t next_serial;
	if (!t->serial)
		t->serial = __atomic_add_fetch(&next_serial, 1, __ATOMIC_RELAXED);
	return t->serial;
}

static void thread_start(struct tstate *t)
{
	if (!core_init())
		return; /* inside our own init: try again later */
	sampler_seed(&t->rng, (uint64_t)(uintptr_t)t ^ ((uint64_t)syscall(SYS_gettid) << 32));
	t->state = TSTATE_RUNNING;
	t->gen = 0; /* forces arming below */
	(void)thread_serial(t);
	if (core.enabled) {
		threads_register(t);
		pthread_setspecific(thread_key, t);
	}
}

/* Folds nbytes allocated into the process total and rings for an interval dump at each
   crossing of a multiple of 2^lg_prof_interval. */
static void note_allocated(const struct options *o, uint64_t nbytes)
{
	uint64_t total = __atomic_add_fetch(&alloc_total, nbytes, __ATOMIC_RELAXED);
	uint64_t next = __atomic_load_n(&next_interval, __ATOMIC_RELAXED);
	if (total < next)
		return;
	uint64_t step = (uint64_t)1 << o->lg_prof_interval;
	uint64_t nn = next + step;
	while (nn <= total)
		nn += step;
	if (__atomic_compare_exchange_n(&next_interval, &next, nn, 0, __ATOMIC_ACQ_REL,
	                                __ATOMIC_RELAXED))
		doorbell_ring(TRIG_INTERVAL);
}

/* ---- the countdown ---- */

/*
 * Accounts the bytes allocated since the countdown was armed plus this request of c bytes,
 * decides whether this request is sampled, and re-arms. Called with t->depth raised.
 */
HEAPTAP_TEXT static int account(struct tstate *t, uint64_t c)
{
	if (t->state == TSTATE_NEW) {
		thread_start(t);
		if (t->state == TSTATE_NEW) {
			t->until = 0;
			return 0;
		}
	}
	if (t->state == TSTATE_EXITED || !core.enabled) {
		t->until = t->armed = core_exact.on ? 0 : FAR;
		return 0;
	}
	uint64_t until = __atomic_load_n(&t->until, __ATOMIC_RELAXED);
	/* armed - until = bytes the fast path let through since arming (0 after a re-arm) */
	uint64_t consumed = t->armed > until ? t->armed - until : 0;
	uint64_t used = consumed + c;
	t->nbytes += used;

	const struct options *o = options_get();
	if (o->lg_prof_interval >= 0 && o->prof_prefix[0])
		note_allocated(o, used);
	void (*hook)(void) = __atomic_load_n(&core.on_event, __ATOMIC_ACQUIRE);
	if (hook)
		hook();

	int sample = 0;
	uint32_t gen = __atomic_load_n(&core.gen, __ATOMIC_ACQUIRE);
	int active = __atomic_load_n(&core.active, __ATOMIC_RELAXED) && !t->thread_off;
	uint64_t period = __atomic_load_n(&core.period, __ATOMIC_RELAXED);
	if (t->gen != gen) {
		/* first event of the thread, or the rate/switch changed: draw afresh */
		t->gen = gen;
		t->sample_left = active ? sampler_interval(&t->rng, period) : FAR;
		consumed = 0;
	} else if (active) {
		t->sample_left = t->sample_left > consumed ? t->sample_left - consumed : 0;
	}
	if (active) {
		if (c >= t->sample_left) {
			sample = 1;
			t->sample_left = sampler_interval(&t->rng, period);
		} else {
			t->sample_left -= c;
		}
	} else {
		t->sample_left = FAR;
	}
	uint64_t next = t->sample_left;
	if (o->lg_prof_interval >= 0 && o->prof_prefix[0]) {
		/* fold allocated bytes into the global count at least this often */
		uint64_t chunk = ((uint64_t)1 << o->lg_prof_interval) / 8;
		if (chunk == 0)
			chunk = 1;
		if (chunk < next)
			next = chunk;
	}
	if (next == 0)
		next = 1;
	if (core_exact.on) {
		/* stats_exact: keep the fast path falling through; armed 0 makes consumed 0 */
		t->armed = 0;
		__atomic_store_n(&t->until, 0, __ATOMIC_RELAXED);
		return sample;
	}
	/* the fast path passes n while n - 1 < until: n < next, as before the shift */
	t->armed = next - 1;
	__atomic_store_n(&t->until, next - 1, __ATOMIC_RELAXED);
	return sample;
}

static void core_rearm_all(void)
{
	__atomic_fetch_add(&core.gen, 1, __ATOMIC_ACQ_REL);
	/* this thread keeps its count exact; others lose at most what they consumed since arming */
	struct tstate *t = &tstate_tls;
	if (t->armed > t->until)
		t->nbytes += t->armed - t->until;
	t->armed = t->until = 0;
	threads_zero_countdowns();
	__atomic_store_n(&tstate_tls.armed, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&tstate_tls.until, 0, __ATOMIC_RELAXED);
}

/* ---- the tables ---- */

/* The unbiased counts one sample of size c adds to its stack at the current period (table
   lock held: the period changes only under it, with the tables cleared, so the counts a
   sample added are recomputed exactly when it goes). */
static void weigh(uint64_t c, uint64_t *objs_fp, uint64_t *bytes_fp)
{
	uint64_t period = __atomic_load_n(&core.period, __ATOMIC_RELAXED);
	if (period <= 1) {
		*objs_fp = (uint64_t)1 << STACKTAB_OBJS_SHIFT;
		*bytes_fp = c;
		return;
	}
	double w = unbias_weight(c, period);
	/* round to nearest (w >= 1: positive; no libm call) */
	*objs_fp = (uint64_t)(w * (double)(1u << STACKTAB_OBJS_SHIFT) + 0.5);
	*bytes_fp = (uint64_t)(w * (double)c + 0.5);
}

/* Adds live sample e to its stack and the totals (table lock held). */
static void account_locked(const struct live_entry *e, int accum)
{
	uint64_t objs_fp, bytes_fp;
	weigh(e->size, &objs_fp, &bytes_fp);
	struct stack_entry *s = stacktab_get(&core.stacks, e->stack);
	s->live_objs_fp += objs_fp;
	s->live_bytes_fp += bytes_fp;
	s->live_samples++;
	if (accum) {
		s->alloc_objs_fp += objs_fp;
		s->alloc_bytes_fp += bytes_fp;
	}
	core.live_samples++;
	core.live_bytes_fp += bytes_fp;
}

/* Takes live sample e off its stack and the totals (table lock held); a stack left without
   live samples may be recycled. */
static void unaccount_locked(const struct live_entry *e)
{
	uint64_t objs_fp, bytes_fp;
	weigh(e->size, &objs_fp, &bytes_fp);
	struct stack_entry *s = stacktab_get(&core.stacks, e->stack);
	s->live_objs_fp -= objs_fp;
	s->live_bytes_fp -= bytes_fp;
	s->live_samples--;
	core.live_bytes_fp -= bytes_fp;
	core.live_samples--;
	if (s->live_samples == 0)
		stacktab_unused(&core.stacks, e->stack);
}

/* A sample that could not be kept (table lock held): counted with the bytes it stood for. */
static void drop_locked(uint64_t c, uint64_t *counter)
{
	uint64_t objs_fp, bytes_fp;
	weigh(c, &objs_fp, &bytes_fp);
	(*counter)++;
	core.dropped_bytes_fp += bytes_fp;
}

/* The outermost frame of a stack cut at prof_bt_max: a return address into this function,
   so every symbolizer (heaptap, jeprof, pprof) names the mark. Never called. */
__attribute__((noinline, used, visibility("default"))) void heaptap_truncated_stack(void)
{
	__asm__ volatile("");
}

/* Samples block p of c bytes; from is the frame address of the slow path that called record
   (where the DWARF walk may start: the frames between are the profiler's own). */
HEAPTAP_TEXT static void record(struct tstate *t, void *p, uint64_t c, const void *from)
{
	const struct options *o = options_get();
	uintptr_t pcs[UNWIND_RAW_MAX];
	uint32_t max = o->prof_bt_max;
	uint32_t depth = unwind_capture(pcs, max + 1, o->prof_unwind, from);
	int unwound = depth > 0, cut = depth > max;
	if (depth == 0) {
		pcs[0] = 0;
		depth = 1;
	} else if (cut) {
		/* +1: symbolizers look up a return address minus one */
		pcs[max] = (uintptr_t)&heaptap_truncated_stack + 1;
		depth = max + 1;
	}
	(void)t;
	/* a sample outside the zone: from now on free asks the filter too */
	if (!sampzone_in_range(&sampzone_main, p))
		real_need_filter();
	struct live_entry le;
	le.ptr = (uintptr_t)p;
	le.size = c;
	le.thread = thread_serial(t);
	int gdump = 0;

	lockrank_lock(&table_lock);
	core.samples++;
	core.unwind_failed += !unwound;
	int64_t id = stacktab_intern(&core.stacks, pcs, depth);
	if (id < 0) {
		drop_locked(c, &core.dropped_stacks);
		lockrank_unlock(&table_lock);
		sys_log_once(&log_once_stacks_full,
		             core.stacks.cap ? "stack table at its budget (prof_max_stacks)"
		                             : "no memory for the stack table",
		             "; samples with new stacks are dropped and counted", NULL);
		return;
	}
	le.stack = (uint32_t)id;
	struct live_entry old;
	int r = livetab_insert(&core.live, &le, &old);
	if (r == 1 || r == -2)
		unaccount_locked(&old);
	if (r < 0) {
		drop_locked(c, &core.dropped_live);
		stacktab_unused(&core.stacks, le.stack);
		lockrank_unlock(&table_lock);
		sys_log_once(&log_once_live_full,
		             core.live.cap ? "live table at its budget (prof_max_live)"
		                           : "no memory for the live table",
		             "; further samples are dropped and counted", NULL);
		return;
	}
	if (cut) {
		core.truncated_samples++;
		uint64_t objs_fp, bytes_fp;
		weigh(c, &objs_fp, &bytes_fp);
		core.truncated_bytes_fp += bytes_fp;
	}
	/* cumulative allocations are kept whatever prof_accum says: the delta profiles
	   (delta.h: ?seconds=N, delta_heap, push) subtract two readings of them; dumps show
	   them only with prof_accum (dump.c) */
	account_locked(&le, 1);
	if (core.live_bytes_fp > core.peak_bytes_fp) {
		core.peak_bytes_fp = core.live_bytes_fp;
		gdump = core.gdump;
	}
	if (core.live_bytes_fp > peakprof_next)
		peakprof_take_locked(&core.stacks, core.live_bytes_fp); /* prof_peak: 10 % above the last copy */
	lockrank_unlock(&table_lock);
	if (gdump)
		doorbell_ring(TRIG_GDUMP);
}

/*
 * Removes p from the tables if it was sampled; 1 if it was (its entry in *out). The caller
 * saw livetab_maybe_sampled(p) (the filter and granule tests, lock-free). From inside the profiler (depth > 0: a signal handler
 * that frees while this thread may hold the table lock) it only tries the lock, so it cannot
 * deadlock; a miss leaves a stale entry that a later sample of the same address replaces.
 */
static int forget(struct tstate *t, void *p, struct live_entry *out, uint32_t *gen)
{
	int found;
	int nested = t->depth > 0;
	tstate_enter(); /* a signal handler's malloc must not try to take the lock we hold */
	if (nested) {
		if (lockrank_trylock(&table_lock) != 0) {
			__atomic_fetch_add(&core.reentrant, 1, __ATOMIC_RELAXED);
			tstate_leave();
			return 0;
		}
	} else {
		lockrank_lock(&table_lock);
	}
	found = livetab_remove(&core.live, (uintptr_t)p, out);
	if (found) {
		struct stack_entry *s = stacktab_get(&core.stacks, out->stack);
		*gen = s->gen;
		if (out->thread && out->thread != thread_serial(t)) {
			/* freed by another thread than the one that allocated it (docs/OPTIONS.md
			   "Memory evidence": why glibc's arenas keep memory after a hand-off) */
			uint64_t objs_fp, bytes_fp;
			weigh(out->size, &objs_fp, &bytes_fp);
			s->xfree_objs_fp += objs_fp;
			s->xfree_bytes_fp += bytes_fp;
		}
		unaccount_locked(out);
	}
	lockrank_unlock(&table_lock);
	tstate_leave();
	return found;
}

/* Puts back an entry removed by forget (a failed realloc keeps the old block), unless its
   stack was recycled meanwhile (generation gen no longer): then it is counted as dropped. */
static void restore(const struct live_entry *e, uint32_t gen)
{
	struct live_entry old;
	lockrank_lock(&table_lock);
	const struct stack_entry *s = stacktab_get(&core.stacks, e->stack);
	if (s->depth == 0 || s->gen != gen) {
		drop_locked(e->size, &core.dropped_live);
		lockrank_unlock(&table_lock);
		return;
	}
	int r = livetab_insert(&core.live, e, &old);
	if (r == 1 || r == -2)
		unaccount_locked(&old);
	if (r >= 0)
		account_locked(e, 0);
	else
		drop_locked(e->size, &core.dropped_live);
	lockrank_unlock(&table_lock);
}

/* ---- slow paths ---- */

/* stats_exact: counts block p (from the real allocator) as handed out. */
static void exact_add(void *p)
{
	if (!p || !__atomic_load_n(&core_exact.on, __ATOMIC_ACQUIRE))
		return;
	uint64_t u = (uint64_t)real.malloc_usable_size(p);
	__atomic_fetch_add(&core_exact.allocated, u, __ATOMIC_RELAXED);
	int64_t live = __atomic_add_fetch(&core_exact.live, (int64_t)u, __ATOMIC_RELAXED);
	int64_t peak = __atomic_load_n(&core_exact.peak, __ATOMIC_RELAXED);
	while (live > peak && !__atomic_compare_exchange_n(&core_exact.peak, &peak, live, 1,
	                                                  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* stats_exact: the usable size of p (real, not pool, not NULL) before it is freed, or 0. */
static uint64_t exact_size(void *p)
{
	if (!__atomic_load_n(&core_exact.on, __ATOMIC_ACQUIRE))
		return 0;
	return (uint64_t)real.malloc_usable_size(p);
}

/* stats_exact: counts u usable bytes as freed. */
static void exact_sub(uint64_t u)
{
	if (!u)
		return;
	__atomic_fetch_add(&core_exact.freed, u, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&core_exact.live, (int64_t)u, __ATOMIC_RELAXED);
}

/* real.realloc with the exact counters kept: on success the old block is freed and the new
   one handed out; glibc's realloc(p, 0) frees p and returns NULL. */
static void *exact_realloc(void *p, size_t n)
{
	uint64_t old = exact_size(p);
	void *q = real.realloc(p, n);
	if (q || n == 0) {
		exact_sub(old);
		exact_add(q);
	}
	return q;
}

static void *real_call(enum interposed_fn fn, size_t n, size_t align)
{
	void *p = NULL;
	switch (fn) {
	case FN_CALLOC:
		return real.calloc(1, n);
	case FN_POSIX_MEMALIGN:
		return real.posix_memalign(&p, align, n) == 0 ? p : NULL;
	case FN_ALIGNED_ALLOC:
		return real.aligned_alloc(align, n);
	case FN_MEMALIGN:
	case FN_VALLOC:
	case FN_PVALLOC:
		return real.memalign(align, n);
	default:
		return real.malloc(n);
	}
}

/* 1 if a sampled block should come from the zone now (the period may change at a reset). */
static int zone_wanted(void)
{
	return zone_on && __atomic_load_n(&core.period, __ATOMIC_RELAXED) >= SAMPZONE_MIN_PERIOD;
}

/* Before the real allocator is known (dlsym is running on this thread): the static pool. */
static void *early_alloc(size_t n, size_t align)
{
	real_resolve();
	if (real_ready())
		return NULL;
	return real_pool_alloc(n, align);
}

/* Counts a request of c bytes that reached a slow path: its call, and its size when
   stats_exact keeps the histogram (every request comes here then: tstate.h). */
static inline void count_request(struct tstate *t, enum interposed_fn fn, uint64_t c)
{
	tstate_count(t, fn);
	if (core_exact.on)
		tstate_count_size(t, c);
}

/* The slow path of every allocation: `alloc` NULL means the malloc family (real_call). */
HEAPTAP_TEXT static void *alloc_slow(enum interposed_fn fn, size_t n, size_t align,
                                     void *(*alloc)(size_t, size_t))
{
	struct tstate *t = &tstate_tls;
	if (unlikely(!real_ready())) {
		void *p = early_alloc(n, align);
		if (p || !real_ready())
			return p;
	}
	if (t->depth) {
		__atomic_fetch_add(&core.reentrant, 1, __ATOMIC_RELAXED);
		void *q = alloc ? alloc(n, align) : real_call(fn, n, align);
		exact_add(q);
		return q;
	}
	tstate_enter();
	uint64_t c = n ? n : 1;
	int sample = account(t, c);
	count_request(t, fn, c);
	void *p = NULL;
	if (sample && !alloc && zone_wanted())
		p = sampzone_alloc(&sampzone_main, (size_t)c, align, fn == FN_CALLOC, 0);
	if (!p)
		p = alloc ? alloc(n, align) : real_call(fn, n, align);
	exact_add(p);
	if (p && sample)
		record(t, p, c, __builtin_frame_address(0));
	tstate_leave();
	return p;
}

HEAPTAP_TEXT void *core_alloc_slow(enum interposed_fn fn, size_t n, size_t align)
{
	return alloc_slow(fn, n, align, NULL);
}

HEAPTAP_TEXT void *core_alloc_slow_with(enum interposed_fn fn, size_t n, size_t align,
                                        void *(*alloc)(size_t, size_t))
{
	return alloc_slow(fn, n, align, alloc);
}

HEAPTAP_TEXT void core_forget_slow(void *p)
{
	if (!p || real_pool_owns(p))
		return;
	struct live_entry e;
	uint32_t gen;
	exact_sub(exact_size(p)); /* the caller's real delete frees it next */
	if (core.enabled) /* the caller saw livetab_maybe_sampled(p) */
		forget(&tstate_tls, p, &e, &gen);
}

HEAPTAP_TEXT void *core_calloc_slow(size_t nmemb, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(nmemb, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	return core_alloc_slow(FN_CALLOC, n, 0);
}

HEAPTAP_TEXT void core_zone_free(void *p)
{
	if (real_pool_owns(p))
		return; /* the pool is at the range's start (real.h) */
	struct tstate *t = &tstate_tls;
	int nested = t->depth > 0;
	struct live_entry e;
	uint32_t gen;
	/* off the tables first: once the zone has it back, another thread may be handed the
	   address and sample it */
	if (core.enabled)
		forget(t, p, &e, &gen);
	tstate_enter();
	int r = sampzone_release(&sampzone_main, p, nested);
	tstate_leave();
	if (r == 0)
		real.free(p); /* in the range, not the zone's */
}

HEAPTAP_TEXT void core_free_slow(void *p)
{
	if (!p || real_pool_owns(p))
		return;
	if (sampzone_in_range(&sampzone_main, p)) {
		core_zone_free(p);
		return;
	}
	if (unlikely(!real_ready()))
		real_resolve();
	struct live_entry e;
	uint32_t gen;
	struct tstate *t = &tstate_tls;
	if (core.enabled) /* free saw livetab_maybe_sampled(p) */
		forget(t, p, &e, &gen);
	exact_sub(exact_size(p));
	real.free(p);
}

/*
 * realloc where the zone is involved: p is a zone block of zold usable bytes, or (zold 0) a
 * real block whose new version is sampled and goes to the zone (to_zone). The new block comes
 * from the zone when to_zone (else, or when the zone refuses, the real malloc), gets
 * min(n, old usable size) bytes, and the old block is released. realloc(p, 0) frees p and
 * returns NULL, as glibc's. NULL on failure with p kept (errno ENOMEM).
 */
static void *zone_move(void *p, size_t zold, size_t n, int to_zone, int nested)
{
	size_t oldsz = zold ? zold : real.malloc_usable_size(p);
	if (!zold && oldsz == 0)
		return exact_realloc(p, n); /* no usable size below: the sample stays outside */
	void *q = NULL;
	if (n) {
		if (to_zone)
			q = sampzone_alloc(&sampzone_main, n, 0, 0, nested);
		if (!q) {
			q = real.malloc(n);
			exact_add(q);
		}
		if (!q) {
			errno = ENOMEM;
			return NULL;
		}
		memcpy(q, p, n < oldsz ? n : oldsz);
	}
	if (zold) {
		if (sampzone_release(&sampzone_main, p, nested) == 0)
			real.free(p);
	} else {
		exact_sub(exact_size(p));
		real.free(p);
	}
	return q;
}

HEAPTAP_TEXT void *core_realloc_slow(void *p, size_t n)
{
	struct tstate *t = &tstate_tls;
	if (unlikely(!real_ready()) || real_pool_owns(p)) {
		if (!real_ready()) {
			void *q = early_alloc(n, 0);
			if (q || !real_ready()) {
				if (q && p)
					memcpy(q, p, real_pool_size(p) < n ? real_pool_size(p) : n);
				return q;
			}
		}
		if (real_pool_owns(p)) {
			/* a bootstrap block grows into a real one */
			void *q = core_alloc_slow(FN_MALLOC, n, 0);
			if (q)
				memcpy(q, p, real_pool_size(p) < n ? real_pool_size(p) : n);
			return q;
		}
	}
	if (!p)
		return core_alloc_slow(FN_MALLOC, n, 0);
	int nested = t->depth > 0;
	size_t zold = 0;
	if (sampzone_in_range(&sampzone_main, p)) {
		tstate_enter();
		zold = sampzone_size(&sampzone_main, p, nested);
		tstate_leave();
		if (zold == SIZE_MAX) {
			/* the zone is busy under this thread (a signal handler): fail, p is kept */
			__atomic_fetch_add(&core.reentrant, 1, __ATOMIC_RELAXED);
			errno = ENOMEM;
			return NULL;
		}
	}
	struct live_entry old;
	uint32_t gen = 0;
	int had = 0;
	if (core.enabled && (zold || livetab_maybe_sampled(p)))
		had = forget(t, p, &old, &gen);
	if (nested) {
		__atomic_fetch_add(&core.reentrant, 1, __ATOMIC_RELAXED);
		return zold ? zone_move(p, zold, n, 0, 1) : exact_realloc(p, n);
	}
	tstate_enter();
	uint64_t c = n ? n : 1;
	int sample = n ? account(t, c) : 0;
	count_request(t, FN_REALLOC, c);
	int to_zone = sample && zone_wanted();
	void *q = zold || to_zone ? zone_move(p, zold, n, to_zone, 0) : exact_realloc(p, n);
	if (!q && n && had)
		restore(&old, gen);
	if (q && sample)
		record(t, q, c, __builtin_frame_address(0));
	tstate_leave();
	return q;
}

struct unload_moves {
	struct maps_remap r[MAPS_UNLOAD_SEGS];
	size_t n;
};

static uintptr_t move_pc(uintptr_t pc, const void *ctx)
{
	const struct unload_moves *m = ctx;
	return maps_remap_pc(pc, m->r, m->n);
}

int core_dlclose(void *handle)
{
	struct maps_unload u;
	tstate_enter();
	int noted = maps_note_unload(handle, &u);
	tstate_leave();
	int r = real.dlclose(handle); /* the object's destructors run sampled, as the host's code */
	if (!noted)
		return r;
	tstate_enter();
	/* once it is gone, its frames move to its synthetic addresses: samples taken from then on
	   where it was are another library's (maps.h) */
	struct unload_moves m;
	m.n = maps_commit_unload(&u, m.r, sizeof m.r / sizeof m.r[0]);
	if (m.n && core.enabled) {
		lockrank_lock(&table_lock);
		core.moved_stacks += stacktab_rewrite_pcs(&core.stacks, move_pc, &m);
		peakprof_rewrite_pcs_locked(move_pc, &m);
		lockrank_unlock(&table_lock);
	}
	if (m.n)
		cpuprof_rewrite_pcs(move_pc, &m);
	tstate_leave();
	return r;
}

/* ---- switches ---- */

int core_set_active(int on)
{
	int old = __atomic_exchange_n(&core.active, on ? 1 : 0, __ATOMIC_ACQ_REL);
	if (old != (on ? 1 : 0))
		core_rearm_all();
	return old;
}

int core_set_thread_active(int on)
{
	struct tstate *t = &tstate_tls;
	int old = !t->thread_off;
	t->thread_off = !on;
	if (old != (on ? 1 : 0)) {
		/* this thread draws afresh on its next allocation, its count kept exact */
		if (t->armed > t->until)
			t->nbytes += t->armed - t->until;
		t->armed = t->until = 0;
		t->gen = 0;
	}
	return old;
}

int core_active(void)
{
	return __atomic_load_n(&core.active, __ATOMIC_RELAXED);
}

unsigned core_lg_sample(void)
{
	uint64_t p = __atomic_load_n(&core.period, __ATOMIC_RELAXED);
	unsigned lg = 0;
	while (((uint64_t)1 << lg) < p)
		lg++;
	return lg;
}

int core_reset_tables(unsigned lg_sample)
{
	if (lg_sample > 62)
		return -EINVAL;
	if (!core.enabled)
		return -ENOENT;
	tstate_enter();
	lockrank_lock(&table_lock);
	stacktab_clear(&core.stacks);
	livetab_clear(&core.live);
	core.live_bytes_fp = 0;
	core.peak_bytes_fp = 0;
	core.live_samples = 0;
	peakprof_reset_locked();
	__atomic_store_n(&core.period, (uint64_t)1 << lg_sample, __ATOMIC_RELAXED);
	options_mut()->lg_prof_sample = lg_sample;
	lockrank_unlock(&table_lock);
	core_rearm_all();
	tstate_leave();
	return 0;
}
