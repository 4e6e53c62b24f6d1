/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * threads.h - the registry of the threads the collector has seen: their TLS state blocks
 * (tstate.h), so that readers can sum the live threads' counters and a rate change can make
 * every thread re-arm, plus the folded counters of the threads that exited.
 *
 * Its lock ranks last (LOCKRANK_THREADS). Counters are read without stopping the threads that
 * bump them, so a sum is approximate while threads run. No host malloc: the registry is a
 * fixed array; a thread beyond it is counted (`unregistered`) and its counters join the sums
 * only when it exits. Not the statistics JSON (stats.c) nor the thread life cycle (core.c
 * registers, lifecycle.c forks).
 */
#ifndef HEAPTAP_LIB_THREADS_H
#define HEAPTAP_LIB_THREADS_H

#include <stdint.h>

#include "tstate.h"

/* Adds t (a thread's first slow-path call). */
void threads_register(struct tstate *t);
/* Folds t's counters into the exited threads' totals and removes it (thread exit). */
void threads_unregister(struct tstate *t);
/* Zeroes every registered thread's countdown, so each re-arms on its next allocation. */
void threads_zero_countdowns(void);

struct threads_sum {
	uint64_t calls[FN_COUNT];
	uint64_t hist[TSTATE_HIST_BUCKETS];
	uint64_t nbytes;        /* requested bytes allocated */
	uint64_t live;          /* threads registered now */
	uint64_t seen;          /* threads ever registered */
	uint64_t unregistered;  /* threads the full registry could not take */
};
/* Sums every registered thread's counters plus those of exited threads. */
void threads_sum(struct threads_sum *out);

/* Fork: prepare takes the registry lock, parent releases it; in the child only the forking
   thread `self` exists: the others are folded and dropped, and the lock released. */
void threads_fork_prepare(void);
void threads_fork_parent(void);
void threads_fork_child(struct tstate *self);

#endif
