/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dump.h - turning the collector's tables into profile files: a snapshot of the stack table,
 * handed to the in-process writers (heap_v2, pprof, legacy), to a descriptor, to an exact
 * path, or under the configured prefix with jemalloc's file names, written beside the final
 * name and renamed; retention of automatic dumps (prof_max_dumps); the exit-time leak summary.
 *
 * Dumps are serialised by the dump lock (LOCKRANK_DUMP, above the table lock), which is also
 * held by a reset. Every function here may take it, so none may be called with a collector
 * lock held or from a signal handler; none calls the host's malloc (the snapshot and the map
 * live in mmap'd scratch reused across dumps). Not the triggers (doorbell.h, bgthread.h) and
 * not the formats (profile/).
 */
#ifndef HEAPTAP_LIB_DUMP_H
#define HEAPTAP_LIB_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "dumpfmt.h"
#include "trigger.h"

/* Writes one snapshot in format fmt to fd; `why` names it in the metadata ("peak": the peak
   profile of peakprof.h instead). 0 or -errno (-ENOENT when profiling is off, or for "peak"
   when prof_peak is off or nothing was copied yet). */
int dump_fd(int fd, enum dump_format fmt, const char *why);

/* A stack's four values as the table keeps them (objects in 2^STACKTAB_OBJS_SHIFT units). */
struct dump_values {
	uint64_t live_objs_fp, live_bytes_fp, alloc_objs_fp, alloc_bytes_fp;
};

struct stack_entry;

/* How a delta profile (delta.h) rewrites the snapshot. */
struct dump_losses;

struct dump_view {
	/* Called under the table lock once for every stack id in the table, in id order, with
	   the entry and its values, which it may change (what is left zero is not written).
	   Must not lock, allocate or block. */
	void (*adjust)(void *ctx, uint32_t id, const struct stack_entry *e, struct dump_values *v);
	void *ctx;
	/* wall-clock start of the window, ns: duration_nanos = snapshot time - since_ns;
	   0 writes no duration (an absolute profile) */
	int64_t since_ns;
	/* When not NULL: called under the table lock after the last adjust, to add what the
	   view knows the stacks do not show (delta.c: recycled stacks). Same rules as adjust. */
	void (*finish)(void *ctx, struct dump_losses *l);
};

/* As dump_fd, with the values rewritten by view (alloc_* written whatever prof_accum). */
int dump_fd_view(int fd, enum dump_format fmt, const char *why, const struct dump_view *view);

/* Writes a dump for trig under prof_prefix in the configured formats, with jemalloc's file
   names, atomically. 0 or -errno (-EINVAL: no prof_prefix; -ECANCELED: the process is
   exiting and trig is not TRIG_FINAL). When name is not NULL, the first file's path is
   copied there (cap bytes). Counted per trigger (dump_get_counts). */
int dump_named(enum dump_trigger trig, char *name, size_t cap);

/* As dump_named, with reason (NULL or one line) written into the dump; memory-pressure dumps
   are also flushed to disk (fdatasync) before they are renamed. */
int dump_named_why(enum dump_trigger trig, const char *reason, char *name, size_t cap);

/* Writes a dump to exactly path (pprof when it ends in .pb.gz or .pb, else heap_v2). */
int dump_path(const char *path);

/* From now on every dump reads the program's jemalloc (jemalloc_dump.h) instead of heaptap's
   tables: backend.c calls it once it chose jemalloc's profiler. */
void dump_use_jemalloc(void);

/* The dump lock, for a reset (core_reset_tables must not run during a dump). */
void dump_lock(void);
void dump_unlock(void);

/* From now on only the final dump is written (the exit sequence sets it). */
void dump_set_exiting(void);

/* Writes the leak summary line to stderr when sampled objects are still live (like jemalloc's
   prof_leak): its estimated bytes, objects and contexts, and how to see them in the final
   dump `name` (NULL or "" when none was written). Returns the estimated live bytes. */
uint64_t dump_leak_summary(const char *name);

/* Dump outcomes per trigger since start (or since fork, in a child). */
struct dump_counts {
	uint64_t ok[TRIG_COUNT];
	uint64_t failed[TRIG_COUNT];
	int last_errno;
};
void dump_get_counts(struct dump_counts *out);

/* Fork: prepare takes the dump lock, parent releases it, the child releases it and starts its
   own file sequence and counts. */
void dump_fork_prepare(void);
void dump_fork_parent(void);
void dump_fork_child(void);

#endif
