/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memacct.h - memory accounting: fills a struct memfacts (profile/inproc/memfacts.h) with the
 * sampled heap (the core's sums), what the allocator below holds (glibc mallinfo2, else
 * mallinfo; jemalloc's stats.* through mallctl; tcmalloc's numeric properties), the resident
 * set (/proc/self/smaps_rollup, else /proc/self/status) and the memory cgroup (cgroup.h).
 *
 * The allocator is the one heaptap forwards to (real.malloc): its statistics functions are
 * looked up with dlsym once, inside the reentrancy guard, and only used when they live in
 * the same object as that malloc. glibc's mallinfo walks every free list under the arena
 * locks, so reading the allocator is for statistics and dumps, never for a tight loop
 * (memacct_read_cheap leaves it out). No host malloc; may take the table lock briefly (not
 * with another collector lock held); not async-signal-safe. Not the policy (memwatch.h).
 */
#ifndef HEAPTAP_LIB_MEMACCT_H
#define HEAPTAP_LIB_MEMACCT_H

#include "../profile/inproc/memfacts.h"

/* Looks up the allocator's statistics functions and locates the memory cgroup (once; later
   calls return at once). Every other function here calls it first. */
void memacct_init(void);

/* Every figure. */
void memacct_read(struct memfacts *m);

/* The heap sums, the resident set from /proc/self/status and the cgroup's usage and limit;
   no allocator call, no page-table walk. */
void memacct_read_cheap(struct memfacts *m);

/* Writes the figures as the members of the current JSON object (stats.c's "memory"). */
struct jsonw;
void memacct_json(struct jsonw *w, const struct memfacts *m);

#endif
