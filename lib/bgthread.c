/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bgthread.c - the background thread of bgthread.h: waits on the doorbell with a deadline for
 * the next time dump, rate-limited gdump or memory-pressure check (memwatch.h), and calls
 * dump_named for each request. No host
 * malloc on the thread itself (its creation may allocate inside pthread_create).
 */
#include "bgthread.h"

#include <stdint.h>

#include "doorbell.h"
#include "dump.h"
#include "memwatch.h"
#include "options.h"
#include "push.h"
#include "sys.h"
#include "tstate.h"

static int bg_state; /* 0 none, 1 starting/running (atomic) */
/* 1 from before the thread takes requests from the doorbell until it has written them
   (atomic, sequentially consistent against bgthread_drain's take) */
static int bg_serving;
/* How long exit waits for the thread's requests in hand (then they are cancelled, counted as
   failed dumps by dump.c). */
#define DRAIN_WAIT_MS 5000
static int log_once_thread;

static void serve(const uint64_t want[TRIG_COUNT])
{
	static const enum dump_trigger order[] = {TRIG_INTERVAL, TRIG_GDUMP, TRIG_MANUAL,
	                                          TRIG_TIME, TRIG_SIGNAL};
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
		for (uint64_t k = 0; k < want[order[i]]; k++)
			dump_named(order[i], NULL, 0);
}

void bgthread_drain(void)
{
	uint64_t want[TRIG_COUNT];
	doorbell_take(want);
	want[TRIG_TIME] = 0; /* nothing is due at exit but the final dump */
	serve(want);
	/* what the thread took before us is its to write: wait for it, or exit's dump_set_exiting
	   would cancel those dumps (a short program lost its interval dumps this way) */
	for (int ms = 0; ms < DRAIN_WAIT_MS && __atomic_load_n(&bg_serving, __ATOMIC_SEQ_CST); ms++)
		sys_sleep_ms(1);
}

static void *bg_main(void *arg)
{
	(void)arg;
	tstate_enter(); /* nothing this thread allocates is profiled */
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
		int64_t watch = memwatch_due();
		if (watch && (!due || watch < due))
			due = watch;
		int64_t push_due = push_due_ns(); /* the push client's next profile or retry */
		if (push_due && (!due || push_due < due))
			due = push_due;
		doorbell_wait(due);
		uint64_t want[TRIG_COUNT];
		__atomic_store_n(&bg_serving, 1, __ATOMIC_SEQ_CST);
		doorbell_take(want);
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
		char reason[256];
		if (memwatch_check(sys_mono_ns(), reason, sizeof reason))
			dump_named_why(TRIG_OOM, reason, NULL, 0);
		__atomic_store_n(&bg_serving, 0, __ATOMIC_SEQ_CST);
		push_run(sys_mono_ns());
	}
	return NULL;
}

void bgthread_ensure(void)
{
	if (__atomic_load_n(&bg_state, __ATOMIC_ACQUIRE))
		return;
	int expect = 0;
	if (!__atomic_compare_exchange_n(&bg_state, &expect, 1, 0, __ATOMIC_ACQ_REL,
	                                 __ATOMIC_ACQUIRE))
		return;
	tstate_enter();
	if (sys_thread_start(bg_main, NULL) != 0)
		sys_log_once(&log_once_thread, "cannot start the background thread",
		             " (automatic dumps other than the final one are off)", NULL);
	tstate_leave();
}

void bgthread_fork_child(void)
{
	__atomic_store_n(&bg_state, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&bg_serving, 0, __ATOMIC_RELEASE);
}
