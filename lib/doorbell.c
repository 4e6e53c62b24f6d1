/*
 * doorbell.c - the dump request flags and the semaphore of doorbell.h. No malloc; ringing is
 * async-signal-safe (atomics and sem_post).
 */
#include "doorbell.h"

#include <errno.h>
#include <semaphore.h>
#include <time.h>

static sem_t wake;
static int wake_ok;
static unsigned pending_mask;      /* 1 << trigger for merged requests (atomic) */
static uint64_t pending_intervals; /* interval dumps requested and not yet taken (atomic) */

int doorbell_init(void)
{
	wake_ok = sem_init(&wake, 0, 0) == 0;
	return wake_ok ? 0 : -errno;
}

void doorbell_ring(enum dump_trigger trig)
{
	int saved = errno;
	if (trig == TRIG_INTERVAL)
		__atomic_fetch_add(&pending_intervals, 1, __ATOMIC_RELEASE);
	else if ((unsigned)trig < TRIG_COUNT)
		__atomic_fetch_or(&pending_mask, 1u << trig, __ATOMIC_RELEASE);
	if (wake_ok)
		sem_post(&wake);
	errno = saved;
}

void doorbell_take(uint64_t want[TRIG_COUNT])
{
	unsigned mask = __atomic_exchange_n(&pending_mask, 0, __ATOMIC_ACQ_REL);
	for (int t = 0; t < TRIG_COUNT; t++)
		want[t] = (mask >> t) & 1;
	want[TRIG_INTERVAL] = __atomic_exchange_n(&pending_intervals, 0, __ATOMIC_ACQ_REL);
}

void doorbell_wait(int64_t deadline_ns)
{
	if (!wake_ok)
		return;
	if (!deadline_ns) {
		while (sem_wait(&wake) != 0 && errno == EINTR)
			;
		return;
	}
	struct timespec ts = {(time_t)(deadline_ns / 1000000000), (long)(deadline_ns % 1000000000)};
	while (sem_clockwait(&wake, CLOCK_MONOTONIC, &ts) != 0 && errno == EINTR)
		;
}

void doorbell_fork_child(void)
{
	wake_ok = sem_init(&wake, 0, 0) == 0;
	__atomic_store_n(&pending_mask, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pending_intervals, 0, __ATOMIC_RELAXED);
}
