/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memwatch.h - the memory-pressure watch of option prof_oom: every MEMWATCH_POLL_MS the
 * background thread compares the process's memory use with its limit and asks for a dump
 * (kind 'o') when use first crosses a threshold of prof_oom_at, or when a cgroup v2
 * memory.events "high" or "max" counter grows.
 *
 * The limit is the memory cgroup's (cgroup.h), or prof_mem_limit when it is set and smaller
 * (or there is no cgroup limit), else physical memory; use is the cgroup's usage when its
 * limit is the one, else the resident set (/proc/self/statm). Crossing a threshold disarms it
 * and every lower one; a threshold re-arms when use falls MEMWATCH_REARM_POINTS percentage
 * points below it. A dump is written at most once per prof_oom_cooldown, except that a higher
 * threshold crossed while a lower one is still disarmed (the same episode of growth) is
 * always written. One check reads two or three small files (no allocator call, no lock).
 *
 * Called from the background thread only (not thread-safe); no host malloc. Not the thread
 * (bgthread.c), nor the dump (dump.h), nor the accounting (memacct.h).
 */
#ifndef HEAPTAP_LIB_MEMWATCH_H
#define HEAPTAP_LIB_MEMWATCH_H

#include <stddef.h>
#include <stdint.h>

#define MEMWATCH_POLL_MS 100
#define MEMWATCH_REARM_POINTS 10

/* 1 when prof_oom is on. */
int memwatch_enabled(void);

/* CLOCK_MONOTONIC deadline of the next check (0 when the watch is off). */
int64_t memwatch_due(void);

/*
 * Runs a check when it is due at now (CLOCK_MONOTONIC ns). Returns 1 when a dump should be
 * written now, its reason (one line) in reason[cap]; else 0.
 */
int memwatch_check(int64_t now, char *reason, size_t cap);

/* What the watch saw last, for the statistics. */
struct memwatch_state {
	uint64_t checks;      /* checks made */
	uint64_t dumps;       /* dumps asked for */
	uint64_t usage;       /* memory use at the last check */
	uint64_t limit;       /* the limit at the last check */
	const char *source;   /* "cgroup", "prof_mem_limit", "physical", or "" before the first */
};
void memwatch_get(struct memwatch_state *out);

/* In a fork child: the thresholds armed again, counts from zero. */
void memwatch_fork_child(void);

#endif
