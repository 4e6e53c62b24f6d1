/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * doorbell.c - the dump request flags and the wake-up counter of doorbell.h, a futex word
 * (not a sem_t: sem_clockwait would tie the library to GLIBC_2.30, sem_timedwait follows the
 * wall clock). No malloc; ringing is async-signal-safe (atomics and a FUTEX_WAKE system call).
 */
#include "doorbell.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static unsigned wake;  /* rings not yet consumed by doorbell_wait (atomic) */
static int wake_ok;
static unsigned pending_mask;      /* 1 << trigger for merged requests (atomic) */
static uint64_t pending_intervals; /* interval dumps requested and not yet taken (atomic) */

int doorbell_init(void)
{
	__atomic_store_n(&wake, 0, __ATOMIC_RELAXED);
	wake_ok = 1;
	return 0;
}

void doorbell_ring(enum dump_trigger trig)
{
	int saved = errno;
	if (trig == TRIG_INTERVAL)
		__atomic_fetch_add(&pending_intervals, 1, __ATOMIC_RELEASE);
	else if ((unsigned)trig < TRIG_COUNT)
		__atomic_fetch_or(&pending_mask, 1u << trig, __ATOMIC_RELEASE);
	if (wake_ok) {
		__atomic_fetch_add(&wake, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &wake, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	}
	errno = saved;
}

void doorbell_take(uint64_t want[TRIG_COUNT])
{
	/* sequentially consistent: ordered with bgthread.c's flag of requests in hand */
	unsigned mask = __atomic_exchange_n(&pending_mask, 0, __ATOMIC_SEQ_CST);
	for (int t = 0; t < TRIG_COUNT; t++)
		want[t] = (mask >> t) & 1;
	want[TRIG_INTERVAL] = __atomic_exchange_n(&pending_intervals, 0, __ATOMIC_SEQ_CST);
}

/* Takes one ring if there is one: 1, else 0. */
static int take_ring(void)
{
	unsigned v = __atomic_load_n(&wake, __ATOMIC_ACQUIRE);
	while (v > 0)
		if (__atomic_compare_exchange_n(&wake, &v, v - 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return 1;
	return 0;
}

void doorbell_wait(int64_t deadline_ns)
{
	if (!wake_ok)
		return;
	struct timespec ts = {(time_t)(deadline_ns / 1000000000), (long)(deadline_ns % 1000000000)};
	while (!take_ring()) {
		/* sleeps only while the count is still 0; FUTEX_WAIT_BITSET's absolute deadline is
		   on CLOCK_MONOTONIC */
		long r = syscall(SYS_futex, &wake, FUTEX_WAIT_BITSET_PRIVATE, 0u, deadline_ns ? &ts : NULL,
		                 NULL, FUTEX_BITSET_MATCH_ANY);
		if (r != 0 && errno == ETIMEDOUT)
			return;
		if (r != 0 && errno != EAGAIN && errno != EINTR)
			return; /* no futexes (cannot happen on Linux >= 2.6.25): do not spin */
	}
}

void doorbell_fork_child(void)
{
	__atomic_store_n(&wake, 0, __ATOMIC_RELAXED);
	wake_ok = 1;
	__atomic_store_n(&pending_mask, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pending_intervals, 0, __ATOMIC_RELAXED);
}
