/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * peakprof.h - the peak profile (option prof_peak): a copy of the live per-stack sums taken
 * whenever the live estimate exceeds the last copied peak by more than 10 % (tcmalloc's
 * rule), so the heap at its largest can be written later (kind 'p' at exit, ?peak=1 over
 * HTTP) without a stream of files.
 *
 * The copy is this module's own: PC vectors and sums in mmap'd arrays, independent of the
 * stack table's ids (which may be recycled), taken under the table lock by the sampling
 * slow path (core.c calls peakprof_take_locked when core.live_bytes_fp > peakprof_next). It
 * calls nothing of the collector's: every caller holds the table lock (core_lock_tables).
 * Dumps read a second copy of it (peakprof_view), made under the dump lock. No host malloc;
 * not async-signal-safe. Not the dump writer (dump.c) nor the tables (stacktab.h).
 */
#ifndef HEAPTAP_LIB_PEAKPROF_H
#define HEAPTAP_LIB_PEAKPROF_H

#include <stdint.h>

#include "../profile/inproc/dumpsrc.h"
#include "stacktab.h"

/* The live estimate above which the next copy is due; UINT64_MAX while prof_peak is off.
   Read and written under the table lock. */
extern uint64_t peakprof_next;

/* Switches the copies on (table lock held; live_bytes: the live estimate now): the next
   sample above it takes one. */
void peakprof_enable_locked(uint64_t live_bytes);

/* Copies the live sums of every stack of t (table lock held; live: the live estimate); sets
   peakprof_next to 110 % of live. A copy that does not fit and cannot be mapped larger is
   skipped and counted. */
void peakprof_take_locked(const struct stacktab *t, uint64_t live);

/* Forgets the copy (heaptap_reset; table lock held). */
void peakprof_reset_locked(void);
/* Rewrites the copy's PCs through map (an unloaded library's frames moved, maps.h). */
void peakprof_rewrite_pcs_locked(uintptr_t (*map)(uintptr_t pc, const void *ctx), const void *ctx);

/*
 * Makes the dump's view of the copy (dump lock and table lock held). Returns 0, or
 * -ENOENT when prof_peak is off or nothing was copied yet, -ENOMEM. Afterwards
 * peakprof_for_each_stack walks the view, and *live_bytes (when not NULL) holds its total.
 */
int peakprof_view_locked(uint64_t *live_bytes);

/* A dump_source's for_each_stack over the view. */
int peakprof_for_each_stack(const struct dump_source *src,
                            int (*fn)(void *ctx, const struct dump_stack *st), void *ctx);

/* Copies taken, and skipped for want of memory (table lock held). */
void peakprof_counts_locked(uint64_t *taken, uint64_t *skipped);

#endif
