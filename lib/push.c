/*
 * push.c - the push client of push.h (being written: counters only).
 */
#include "push.h"

static struct push_counts counts;

void push_get_counts(struct push_counts *out)
{
	out->pushed = __atomic_load_n(&counts.pushed, __ATOMIC_RELAXED);
	out->errors = __atomic_load_n(&counts.errors, __ATOMIC_RELAXED);
	out->dropped = __atomic_load_n(&counts.dropped, __ATOMIC_RELAXED);
	out->rejected = __atomic_load_n(&counts.rejected, __ATOMIC_RELAXED);
	out->queued = __atomic_load_n(&counts.queued, __ATOMIC_RELAXED);
	out->bytes = __atomic_load_n(&counts.bytes, __ATOMIC_RELAXED);
	out->last_status = __atomic_load_n(&counts.last_status, __ATOMIC_RELAXED);
}

int push_enabled(void)
{
	return 0;
}

void push_start(void)
{
}

void push_fork_child(void)
{
}
