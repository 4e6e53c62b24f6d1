/*
 * trigger.c - what decides WHEN to dump, apart from exit and explicit calls: the background
 * thread and the requests it serves (interval, high-water "gdump", time, signal, and dump
 * requests from other threads).
 *
 * A request is an atomic flag (a counter for interval dumps, which are one per crossing)
 * plus a sem_post on a process-private semaphore: both async-signal-safe, and no file
 * descriptor that a daemon closing "all fds" could take away or reuse. The thread is created
 * at start-up by the library constructor when a configured trigger needs it, or lazily (e.g.
 * in a forked child). Not the dump writer (dump.c).
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "collector.h"
#include "http.h"
#include "internal.h"
#include "options.h"
#include "sys.h"

static sem_t wake;
static int wake_ok;
static int bg_state;           /* 0 none, 1 starting/running (atomic) */
static unsigned pending_mask;  /* 1 << trigger for merged requests (atomic) */
static uint64_t pending_intervals; /* interval dumps requested and not yet written (atomic) */
static uint64_t alloc_total;   /* bytes allocated, folded by threads (atomic) */
static uint64_t next_interval; /* alloc_total at which the next interval dump is due (atomic) */
static int log_once_thread;

void collector_request_dump(enum dump_trigger trig)
{
	int saved = errno;
	if (trig == TRIG_INTERVAL)
		__atomic_fetch_add(&pending_intervals, 1, __ATOMIC_RELEASE);
	else if ((unsigned)trig <= TRIG_SIGNAL)
		__atomic_fetch_or(&pending_mask, 1u << trig, __ATOMIC_RELEASE);
	if (wake_ok)
		sem_post(&wake);
	errno = saved;
}

static void on_signal(int sig)
{
	(void)sig;
	collector_request_dump(TRIG_SIGNAL);
}

void trigger_init(void)
{
	const struct options *o = options_get();
	wake_ok = sem_init(&wake, 0, 0) == 0;
	if (o->lg_prof_interval >= 0)
		next_interval = (uint64_t)1 << o->lg_prof_interval;
	core.want_background = o->lg_prof_interval >= 0 || o->prof_gdump ||
	                       o->prof_time_interval_ms > 0 || o->prof_signal > 0;
	if (!o->prof_prefix[0])
		core.want_background = 0; /* nowhere to write automatic dumps */
	if (o->prof_signal > 0 && o->prof_prefix[0]) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(o->prof_signal, &sa, NULL);
	}
}

/* Takes the pending requests: want[trig] = how many dumps to write (interval dumps are not
   merged: one per crossing, like jemalloc's; the others are). */
static void take_requests(uint64_t want[6])
{
	unsigned mask = __atomic_exchange_n(&pending_mask, 0, __ATOMIC_ACQ_REL);
	for (int t = 0; t <= TRIG_SIGNAL; t++)
		if (mask & (1u << t))
			want[t] = 1;
	want[TRIG_INTERVAL] = __atomic_exchange_n(&pending_intervals, 0, __ATOMIC_ACQ_REL);
}

static void serve(const uint64_t want[6])
{
	static const enum dump_trigger order[] = {TRIG_INTERVAL, TRIG_GDUMP, TRIG_MANUAL,
	                                          TRIG_TIME, TRIG_SIGNAL};
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
		for (uint64_t k = 0; k < want[order[i]]; k++)
			collector_dump_named(order[i], NULL, 0);
}

void trigger_drain(void)
{
	uint64_t want[6] = {0};
	take_requests(want);
	want[TRIG_TIME] = 0; /* nothing is due at exit but the final dump */
	serve(want);
}

/* Waits for a request or until the monotonic deadline (0 = none). */
static void wait_until(int64_t deadline_ns)
{
	if (!deadline_ns) {
		while (sem_wait(&wake) != 0 && errno == EINTR)
			;
		return;
	}
	struct timespec ts = {(time_t)(deadline_ns / 1000000000), (long)(deadline_ns % 1000000000)};
	while (sem_clockwait(&wake, CLOCK_MONOTONIC, &ts) != 0 && errno == EINTR)
		;
}

static void *bg_main(void *arg)
{
	(void)arg;
	core_tls.depth = 1; /* nothing this thread allocates is profiled */
	const struct options *o = options_get();
	int64_t now = sys_mono_ns();
	int64_t time_step = (int64_t)o->prof_time_interval_ms * 1000000;
	int64_t time_next = time_step > 0 ? now + time_step : 0;
	int64_t gdump_step = (int64_t)o->prof_gdump_rate_ms * 1000000;
	int64_t gdump_last = 0;
	int gdump_pending = 0;
	for (;;) {
		int64_t due = time_next;
		if (gdump_pending && (!due || gdump_last + gdump_step < due))
			due = gdump_last + gdump_step;
		wait_until(due);
		uint64_t want[6] = {0};
		take_requests(want);
		now = sys_mono_ns();
		if (time_next && now >= time_next) {
			want[TRIG_TIME] = 1;
			while (time_next <= now)
				time_next += time_step;
		}
		if (want[TRIG_GDUMP])
			gdump_pending = 1;
		want[TRIG_GDUMP] = 0;
		if (gdump_pending && now - gdump_last >= gdump_step) {
			want[TRIG_GDUMP] = 1;
			gdump_pending = 0;
			gdump_last = now;
		}
		serve(want);
	}
	return NULL;
}

void trigger_ensure_thread(void)
{
	if (__atomic_load_n(&bg_state, __ATOMIC_ACQUIRE) || !wake_ok)
		return;
	int expect = 0;
	if (!__atomic_compare_exchange_n(&bg_state, &expect, 1, 0, __ATOMIC_ACQ_REL,
	                                 __ATOMIC_ACQUIRE))
		return;
	core_tls.depth++;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_t th;
	int rc = pthread_create(&th, &attr, bg_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		sys_log_once(&log_once_thread, "cannot start the background thread",
		             " (automatic dumps other than the final one are off)", NULL);
	core_tls.depth--;
}

void trigger_start(void)
{
	collector_init();
	if (core.enabled && core.want_background)
		trigger_ensure_thread();
	core_tls.depth++;
	if (core.enabled)
		http_start_from_options();
	core_tls.depth--;
}

void trigger_note_allocated(uint64_t nbytes)
{
	const struct options *o = options_get();
	if (o->lg_prof_interval < 0 || !o->prof_prefix[0])
		return;
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
		collector_request_dump(TRIG_INTERVAL);
}

void trigger_gdump(void)
{
	collector_request_dump(TRIG_GDUMP);
}

void trigger_fork_child(void)
{
	/* the parent's thread does not exist here: a fresh semaphore, no requests inherited */
	wake_ok = sem_init(&wake, 0, 0) == 0;
	__atomic_store_n(&pending_mask, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pending_intervals, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&bg_state, 0, __ATOMIC_RELEASE);
}
