/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * threads.c - the thread registry of threads.h: a fixed array of pointers to the registered
 * threads' TLS blocks under the registry lock, and the folded counters of exited threads.
 * No host malloc.
 */
#include "threads.h"

#include <string.h>

#include "lockrank.h"

#define MAX_THREADS 4096

static struct ranked_mutex reg_lock = RANKED_MUTEX_INITIALIZER(LOCKRANK_THREADS);
static struct tstate *threads[MAX_THREADS];
static size_t nthreads;
static uint64_t threads_seen;
static uint64_t threads_unregistered; /* registry was full */

/* Counters of exited threads. */
static uint64_t gone_calls[FN_COUNT];
static uint64_t gone_hist[TSTATE_HIST_BUCKETS];
static uint64_t gone_nbytes;

void threads_register(struct tstate *t)
{
	lockrank_lock(&reg_lock);
	threads_seen++;
	if (nthreads < MAX_THREADS) {
		threads[nthreads++] = t;
		t->registered = 1;
	} else {
		threads_unregistered++;
	}
	lockrank_unlock(&reg_lock);
}

static uint64_t bytes_of(const struct tstate *t)
{
	uint64_t until = __atomic_load_n(&t->until, __ATOMIC_RELAXED);
	uint64_t armed = __atomic_load_n(&t->armed, __ATOMIC_RELAXED);
	uint64_t n = __atomic_load_n(&t->nbytes, __ATOMIC_RELAXED);
	return n + (armed > until ? armed - until : 0);
}

/* Adds t's counters to calls, hist and *nbytes. */
static void add_thread(uint64_t calls[FN_COUNT], uint64_t hist[TSTATE_HIST_BUCKETS],
                       uint64_t *nbytes, const struct tstate *t)
{
	for (int i = 0; i < FN_COUNT; i++)
		calls[i] += __atomic_load_n(&t->calls[i], __ATOMIC_RELAXED);
	for (int i = 0; i < TSTATE_HIST_BUCKETS; i++)
		hist[i] += __atomic_load_n(&t->hist[i], __ATOMIC_RELAXED);
	*nbytes += bytes_of(t);
}

void threads_unregister(struct tstate *t)
{
	lockrank_lock(&reg_lock);
	add_thread(gone_calls, gone_hist, &gone_nbytes, t);
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
	t->nbytes = 0;
	lockrank_unlock(&reg_lock);
}

void threads_zero_countdowns(void)
{
	lockrank_lock(&reg_lock);
	for (size_t i = 0; i < nthreads; i++) {
		/* armed first: bytes consumed (armed - until) read as 0, not as a huge number */
		__atomic_store_n(&threads[i]->armed, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&threads[i]->until, 0, __ATOMIC_RELAXED);
	}
	lockrank_unlock(&reg_lock);
}

void threads_sum(struct threads_sum *out)
{
	memset(out, 0, sizeof *out);
	lockrank_lock(&reg_lock);
	memcpy(out->calls, gone_calls, sizeof gone_calls);
	memcpy(out->hist, gone_hist, sizeof gone_hist);
	out->nbytes = gone_nbytes;
	for (size_t k = 0; k < nthreads; k++)
		add_thread(out->calls, out->hist, &out->nbytes, threads[k]);
	out->live = nthreads;
	out->seen = threads_seen;
	out->unregistered = threads_unregistered;
	lockrank_unlock(&reg_lock);
}

void threads_fork_prepare(void)
{
	lockrank_lock(&reg_lock);
}

void threads_fork_parent(void)
{
	lockrank_unlock(&reg_lock);
}

void threads_fork_child(struct tstate *self)
{
	/* only the forking thread exists in the child: fold the others and drop them */
	for (size_t i = 0; i < nthreads; i++)
		if (threads[i] != self)
			add_thread(gone_calls, gone_hist, &gone_nbytes, threads[i]);
	nthreads = 0;
	if (self->registered)
		threads[nthreads++] = self;
	lockrank_unlock(&reg_lock);
}
