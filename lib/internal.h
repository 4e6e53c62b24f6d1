/*
 * internal.h - the collector's shared state and the calls its modules make on each other
 * (core.c, dump.c, stats.c, trigger.c). Not a contract for anyone outside lib/ (that is
 * collector.h) and never exported from the .so.
 *
 * Unless said otherwise a function may take collector locks, so it must not be called with
 * the table lock held nor from a signal handler; none calls the host's malloc.
 */
#ifndef HEAPTAP_LIB_INTERNAL_H
#define HEAPTAP_LIB_INTERNAL_H

#include <stdint.h>

#include "core.h"
#include "livetab.h"
#include "stacktab.h"

struct core_state {
	int enabled;             /* opt prof, and the tables exist */
	int active;              /* sampling switch (atomic) */
	int accum;               /* maintain alloc_* counts */
	int gdump;               /* dump on a new high-water mark */
	int want_background;     /* a trigger needs the background thread */
	uint32_t gen;            /* bumped when every thread must re-arm (atomic) */
	uint64_t period;         /* R in bytes (atomic) */
	int64_t start_time_ns;
	struct stacktab stacks;  /* under the table lock */
	struct livetab live;     /* under the table lock */
	uint64_t live_bytes_fp;  /* sum of bytes_fp over live samples (table lock) */
	uint64_t peak_bytes_fp;  /* its maximum since start/reset */
	uint64_t live_samples;
	uint64_t samples;        /* sampled allocations since start */
	uint64_t reentrant;      /* calls made from inside the profiler, never sampled (atomic) */
};

extern struct core_state core;

/* core.c: the table lock (rank 2). */
void core_lock_tables(void);
void core_unlock_tables(void);

/* dump.c: the dump lock (rank 1) serialises dumps and resets. */
void dump_lock(void);
void dump_unlock(void);
void dump_fork_prepare(void);
void dump_fork_parent(void);
void dump_fork_child(void);
/* At exit: final dump and leak summary as configured. */
void dump_final(void);

/* stats.c: the thread registry (rank 3) and counters. */
void stats_thread_start(struct tstate *t);
void stats_thread_exit(struct tstate *t);
void stats_zero_countdowns(void);
void stats_fork_prepare(void);
void stats_fork_parent(void);
void stats_fork_child(struct tstate *self);
/* A dump attempt of trigger trig finished with rc (0 or -errno). */
void stats_note_dump(int trig, int rc);
/* Sums every registered thread's counters plus those of exited threads. */
void stats_sum_threads(uint64_t calls[FN_COUNT], uint64_t hist[CORE_HIST_BUCKETS],
                       uint64_t *nbytes);

/* trigger.c: the background thread. */
void trigger_init(void);
/* Starts the background thread if a configured trigger needs it (from the constructor). */
void trigger_start(void);
void trigger_ensure_thread(void);
void trigger_note_allocated(uint64_t nbytes);
void trigger_gdump(void);
void trigger_fork_child(void);
/* At exit: serves the requests still pending, on the calling thread. */
void trigger_drain(void);
/* dump.c: from now on only the final dump is written (set at exit). */
void dump_set_exiting(void);

#endif
