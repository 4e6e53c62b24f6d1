/*
 * stats.c - the collector's statistics: a registry of the threads' TLS counter blocks (so
 * readers can sum live threads), the folded counters of exited threads, dump outcomes, and
 * collector_stats_json, which writes them all as one JSON object (fields documented in
 * docs/OPTIONS.md).
 *
 * The registry lock ranks below the table lock. Counters are read without stopping the
 * threads that bump them, so a sum is approximate while threads run. No host malloc: the
 * registry is a fixed array. Not the sampler nor the tables (core.c).
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "../base/outbuf.h"
#include "cfi.h"
#include "collector.h"
#include "internal.h"
#include "options.h"
#include "sys.h"

#define MAX_THREADS 4096

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tstate *threads[MAX_THREADS];
static size_t nthreads;
static uint64_t threads_seen;
static uint64_t threads_unregistered; /* registry was full */

/* Counters of exited threads. */
static uint64_t gone_calls[FN_COUNT];
static uint64_t gone_hist[CORE_HIST_BUCKETS];
static uint64_t gone_nbytes;

/* Dumps, per trigger (enum dump_trigger). */
#define NTRIG 6
static uint64_t dumps_ok[NTRIG];
static uint64_t dumps_failed[NTRIG];
static int last_dump_errno;

void stats_thread_start(struct tstate *t)
{
	pthread_mutex_lock(&reg_lock);
	threads_seen++;
	if (nthreads < MAX_THREADS) {
		threads[nthreads++] = t;
		t->registered = 1;
	} else {
		threads_unregistered++;
	}
	pthread_mutex_unlock(&reg_lock);
}

static uint64_t bytes_of(const struct tstate *t)
{
	uint64_t until = __atomic_load_n(&t->until, __ATOMIC_RELAXED);
	uint64_t armed = __atomic_load_n(&t->armed, __ATOMIC_RELAXED);
	uint64_t n = __atomic_load_n(&t->nbytes, __ATOMIC_RELAXED);
	return n + (armed > until ? armed - until : 0);
}

/* malloc's requests are counted only in malloc_hist (core.h): into calls and hist. */
static void add_malloc_hist(uint64_t calls[FN_COUNT], uint64_t hist[CORE_HIST_BUCKETS],
                            const struct tstate *t)
{
	for (unsigned i = 0; i < 64; i++) {
		uint64_t v = __atomic_load_n(&t->malloc_hist[i], __ATOMIC_RELAXED);
		calls[FN_MALLOC] += v;
		hist[i < CORE_HIST_BUCKETS ? i : CORE_HIST_BUCKETS - 1] += v;
	}
}

static void fold(const struct tstate *t)
{
	for (int i = 0; i < FN_COUNT; i++)
		gone_calls[i] += __atomic_load_n(&t->calls[i], __ATOMIC_RELAXED);
	for (int i = 0; i < CORE_HIST_BUCKETS; i++)
		gone_hist[i] += __atomic_load_n(&t->hist[i], __ATOMIC_RELAXED);
	add_malloc_hist(gone_calls, gone_hist, t);
	gone_nbytes += bytes_of(t);
}

void stats_thread_exit(struct tstate *t)
{
	pthread_mutex_lock(&reg_lock);
	fold(t);
	for (size_t i = 0; i < nthreads; i++) {
		if (threads[i] == t) {
			threads[i] = threads[--nthreads];
			break;
		}
	}
	t->registered = 0;
	/* what it allocates from now on is not counted again */
	memset(t->calls, 0, sizeof t->calls);
	memset(t->hist, 0, sizeof t->hist);
	memset(t->malloc_hist, 0, sizeof t->malloc_hist);
	t->nbytes = 0;
	pthread_mutex_unlock(&reg_lock);
}

void stats_zero_countdowns(void)
{
	pthread_mutex_lock(&reg_lock);
	for (size_t i = 0; i < nthreads; i++) {
		/* armed first: bytes consumed (armed - until) read as 0, not as a huge number */
		__atomic_store_n(&threads[i]->armed, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&threads[i]->until, 0, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&reg_lock);
}

void stats_fork_prepare(void)
{
	pthread_mutex_lock(&reg_lock);
}

void stats_fork_parent(void)
{
	pthread_mutex_unlock(&reg_lock);
}

void stats_fork_child(struct tstate *self)
{
	/* only the forking thread exists in the child: fold the others and drop them */
	for (size_t i = 0; i < nthreads; i++)
		if (threads[i] != self)
			fold(threads[i]);
	nthreads = 0;
	if (self->registered)
		threads[nthreads++] = self;
	memset(dumps_ok, 0, sizeof dumps_ok);
	memset(dumps_failed, 0, sizeof dumps_failed);
	pthread_mutex_unlock(&reg_lock);
}

void stats_note_dump(int trig, int rc)
{
	if (trig < 0 || trig >= NTRIG)
		return;
	if (rc == 0) {
		__atomic_fetch_add(&dumps_ok[trig], 1, __ATOMIC_RELAXED);
	} else {
		__atomic_fetch_add(&dumps_failed[trig], 1, __ATOMIC_RELAXED);
		__atomic_store_n(&last_dump_errno, -rc, __ATOMIC_RELAXED);
	}
}

void stats_sum_threads(uint64_t calls[FN_COUNT], uint64_t hist[CORE_HIST_BUCKETS],
                       uint64_t *nbytes)
{
	pthread_mutex_lock(&reg_lock);
	memcpy(calls, gone_calls, sizeof gone_calls);
	memcpy(hist, gone_hist, sizeof gone_hist);
	*nbytes = gone_nbytes;
	for (size_t k = 0; k < nthreads; k++) {
		const struct tstate *t = threads[k];
		for (int i = 0; i < FN_COUNT; i++)
			calls[i] += __atomic_load_n(&t->calls[i], __ATOMIC_RELAXED);
		for (int i = 0; i < CORE_HIST_BUCKETS; i++)
			hist[i] += __atomic_load_n(&t->hist[i], __ATOMIC_RELAXED);
		add_malloc_hist(calls, hist, t);
		*nbytes += bytes_of(t);
	}
	pthread_mutex_unlock(&reg_lock);
}

static void key_u64(struct outbuf *ob, const char *key, uint64_t v, int comma)
{
	if (comma)
		outbuf_putc(ob, ',');
	outbuf_putc(ob, '"');
	outbuf_puts(ob, key);
	outbuf_puts(ob, "\":");
	outbuf_u64(ob, v);
}

static void key_str(struct outbuf *ob, const char *key, const char *v, int comma)
{
	if (comma)
		outbuf_putc(ob, ',');
	outbuf_putc(ob, '"');
	outbuf_puts(ob, key);
	outbuf_puts(ob, "\":\"");
	outbuf_json_str(ob, v);
	outbuf_putc(ob, '"');
}

static void key_bool(struct outbuf *ob, const char *key, int v, int comma)
{
	if (comma)
		outbuf_putc(ob, ',');
	outbuf_putc(ob, '"');
	outbuf_puts(ob, key);
	outbuf_puts(ob, v ? "\":true" : "\":false");
}

static const char *const fn_names[FN_COUNT] = {
	"malloc", "free", "calloc", "realloc", "reallocarray", "posix_memalign",
	"aligned_alloc", "memalign", "valloc", "pvalloc", "malloc_usable_size", "new", "delete",
};
static const char *const trig_names[NTRIG] = {"interval", "gdump", "manual", "final", "time",
                                              "signal"};

static void options_json(struct outbuf *ob)
{
	const struct options *o = options_get();
	char fmt[32];
	struct outbuf fb;
	outbuf_init(&fb, fmt, sizeof fmt - 1, -1);
	if (o->prof_format & DUMP_HEAPV2)
		outbuf_puts(&fb, "heap_v2");
	if (o->prof_format & DUMP_PPROF)
		outbuf_puts(&fb, fb.len ? "+pprof" : "pprof");
	if (o->prof_format & DUMP_LEGACY)
		outbuf_puts(&fb, fb.len ? "+legacy" : "legacy");
	fmt[fb.len] = 0;
	outbuf_puts(ob, "\"options\":{");
	key_bool(ob, "prof", o->prof, 0);
	key_bool(ob, "prof_active", o->prof_active, 1);
	key_u64(ob, "lg_prof_sample", o->lg_prof_sample, 1);
	outbuf_puts(ob, ",\"lg_prof_interval\":");
	outbuf_i64(ob, o->lg_prof_interval);
	key_bool(ob, "prof_gdump", o->prof_gdump, 1);
	key_u64(ob, "prof_gdump_rate_ms", o->prof_gdump_rate_ms, 1);
	key_bool(ob, "prof_final", o->prof_final, 1);
	key_bool(ob, "prof_leak", o->prof_leak, 1);
	key_bool(ob, "prof_leak_error", o->prof_leak_error, 1);
	key_bool(ob, "prof_accum", o->prof_accum, 1);
	key_str(ob, "prof_prefix", o->prof_prefix, 1);
	key_u64(ob, "prof_time_interval_ms", o->prof_time_interval_ms, 1);
	key_u64(ob, "prof_signal", (uint64_t)o->prof_signal, 1);
	key_u64(ob, "prof_max_dumps", o->prof_max_dumps, 1);
	key_str(ob, "prof_format", fmt, 1);
	key_str(ob, "prof_unwind", options_unwind_name(o->prof_unwind), 1);
	key_u64(ob, "prof_bt_max", o->prof_bt_max, 1);
	key_u64(ob, "prof_max_stacks", o->prof_max_stacks, 1);
	key_u64(ob, "prof_max_live", o->prof_max_live, 1);
	key_str(ob, "http", o->http, 1);
	key_bool(ob, "verbose", o->verbose, 1);
	key_bool(ob, "stats_exact", o->stats_exact, 1);
	outbuf_putc(ob, '}');
}

void collector_stats_json(struct outbuf *ob)
{
	collector_init();
	core_tls.depth++; /* no sampling (and no table lock) from a signal handler meanwhile */
	uint64_t calls[FN_COUNT], hist[CORE_HIST_BUCKETS], nbytes;
	stats_sum_threads(calls, hist, &nbytes);

	core_lock_tables();
	uint64_t samples = core.samples;
	uint64_t live_samples = core.live_samples;
	uint64_t live_bytes = core.live_bytes_fp;
	uint64_t peak_bytes = core.peak_bytes_fp;
	uint64_t nstacks = core.stacks.n;
	uint64_t drop_stack = core.stacks.dropped_full;
	uint64_t drop_live = core.live.dropped_full;
	/* the collector's own memory: address space mapped for the tables, and the part in use */
	uint64_t mapped = core.stacks.ents_bytes + core.stacks.index_bytes + core.stacks.pool_bytes +
	                  core.live.bytes + sizeof livetab_filter + sizeof livetab_gran;
	uint64_t used = (uint64_t)core.stacks.n * sizeof(struct stack_entry) + core.stacks.index_bytes +
	                core.stacks.pool_used * sizeof(uintptr_t) + core.live.bytes;
	core_unlock_tables();
	pthread_mutex_lock(&reg_lock);
	uint64_t nthr = nthreads, seen = threads_seen, unreg = threads_unregistered;
	pthread_mutex_unlock(&reg_lock);

	outbuf_putc(ob, '{');
	key_str(ob, "version", "0.1.0", 0);
	key_u64(ob, "pid", (uint64_t)getpid(), 1);
	outbuf_puts(ob, ",\"start_time_ns\":");
	outbuf_i64(ob, core.start_time_ns);
	key_bool(ob, "enabled", core.enabled, 1);
	key_bool(ob, "active", collector_active(), 1);
	key_u64(ob, "sample_period", __atomic_load_n(&core.period, __ATOMIC_RELAXED), 1);
	key_u64(ob, "threads_live", nthr, 1);
	key_u64(ob, "threads_seen", seen, 1);
	key_u64(ob, "threads_unregistered", unreg, 1);

	outbuf_puts(ob, ",\"calls\":{");
	for (int i = 0; i < FN_COUNT; i++)
		key_u64(ob, fn_names[i], calls[i], i > 0);
	outbuf_putc(ob, '}');
	key_u64(ob, "allocated_bytes", nbytes, 1);
	outbuf_puts(ob, ",\"size_histogram_log2\":[");
	for (int i = 0; i < CORE_HIST_BUCKETS; i++) {
		if (i)
			outbuf_putc(ob, ',');
		outbuf_u64(ob, hist[i]);
	}
	outbuf_putc(ob, ']');

	outbuf_puts(ob, ",\"sampler\":{");
	key_u64(ob, "samples", samples, 0);
	key_u64(ob, "live_samples", live_samples, 1);
	key_u64(ob, "stacks", nstacks, 1);
	key_u64(ob, "dropped_stack_table_full", drop_stack, 1);
	key_u64(ob, "dropped_live_table_full", drop_live, 1);
	key_u64(ob, "reentrant_calls", __atomic_load_n(&core.reentrant, __ATOMIC_RELAXED), 1);
	struct cfi_counts cc;
	cfi_get_counts(&cc);
	key_u64(ob, "unwind_rule_parses", cc.parses, 1);
	key_u64(ob, "unwind_fallbacks", cc.fallbacks, 1);
	outbuf_putc(ob, '}');
	key_u64(ob, "collector_mapped_bytes", mapped, 1);
	key_u64(ob, "collector_table_bytes", used, 1);
	key_u64(ob, "live_bytes_estimate", live_bytes, 1);
	key_u64(ob, "peak_live_bytes_estimate", peak_bytes, 1);
	if (__atomic_load_n(&core_exact.on, __ATOMIC_ACQUIRE)) {
		/* stats_exact: usable sizes of the allocator below (core.h) */
		outbuf_puts(ob, ",\"exact\":{");
		key_u64(ob, "allocated_usable_bytes",
		        __atomic_load_n(&core_exact.allocated, __ATOMIC_RELAXED), 0);
		key_u64(ob, "freed_usable_bytes", __atomic_load_n(&core_exact.freed, __ATOMIC_RELAXED),
		        1);
		outbuf_puts(ob, ",\"live_usable_bytes\":");
		outbuf_i64(ob, __atomic_load_n(&core_exact.live, __ATOMIC_RELAXED));
		outbuf_puts(ob, ",\"peak_live_usable_bytes\":");
		outbuf_i64(ob, __atomic_load_n(&core_exact.peak, __ATOMIC_RELAXED));
		outbuf_putc(ob, '}');
	}

	outbuf_puts(ob, ",\"dumps\":{");
	for (int i = 0; i < NTRIG; i++)
		key_u64(ob, trig_names[i], __atomic_load_n(&dumps_ok[i], __ATOMIC_RELAXED), i > 0);
	outbuf_putc(ob, '}');
	outbuf_puts(ob, ",\"dump_errors\":{");
	for (int i = 0; i < NTRIG; i++)
		key_u64(ob, trig_names[i], __atomic_load_n(&dumps_failed[i], __ATOMIC_RELAXED), i > 0);
	outbuf_putc(ob, '}');
	key_u64(ob, "last_dump_errno", (uint64_t)__atomic_load_n(&last_dump_errno, __ATOMIC_RELAXED),
	        1);
	outbuf_putc(ob, ',');
	options_json(ob);
	outbuf_putc(ob, '}');
	core_tls.depth--;
}
