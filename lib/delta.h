/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * delta.h - delta profiles: what was allocated between two readings of the stack table's
 * cumulative counts, with what is live at the end. A reading (struct delta_base) keeps, per
 * stack id, the stack's hash and its cumulative objects and bytes; a delta profile writes
 * alloc_* = now - reading (a stack interned since, recycled or reset counts whole) and
 * inuse_* absolute, duration_nanos = the time between. Used by the HTTP pull endpoints
 * (?seconds=N, /debug/pprof/delta_heap: http_delta.c) and the push client (push.c).
 *
 * It is not the tables (stacktab.h) nor the writers (dump.h, profile/). Readings live in
 * mmap'd memory; nothing here calls the host's malloc. A reading is used by one thread at a
 * time (the caller's); the functions take the dump and table locks, so never call them with
 * a collector lock held nor from a signal handler. heaptap's own collector only (not the
 * jemalloc backend).
 */
#ifndef HEAPTAP_LIB_DELTA_H
#define HEAPTAP_LIB_DELTA_H

#include <stddef.h>
#include <stdint.h>

#include "dumpfmt.h"

struct delta_ent {
	uint64_t hash;      /* the stack's hash when read; 0 = no stack there then */
	uint64_t objs_fp;   /* cumulative allocations, 2^STACKTAB_OBJS_SHIFT units */
	uint64_t bytes_fp;  /* cumulative bytes */
};

struct delta_base {
	struct delta_ent *ents; /* by stack id, cap of them (mmap'd) */
	size_t cap;
	size_t n;               /* ids read (ids from n on did not exist then) */
	size_t map_bytes;
	int64_t time_ns;        /* wall-clock time of the reading */
	/* Everything ever allocated at the reading: the stacks' cumulative counts plus those of
	   the stacks recycled before it, and how many those were. What a delta profile's stacks
	   do not show of the window is then (total now) - (this) - (the profile's alloc_*): the
	   allocations of stacks recycled within it, reported as its recycled_* losses. */
	uint64_t total_objs_fp, total_bytes_fp;
	uint64_t recycled;
};

/* What a delta profile holds. */
enum delta_parts {
	DELTA_INUSE = 1,    /* inuse_objects, inuse_space (absolute) */
	DELTA_ALLOC = 2,    /* alloc_objects, alloc_space (since the reading) */
	DELTA_BOTH = 3,
};

/* Maps room for a reading of the whole stack table (empty: as if read at process start,
   time_ns = the collector's start). 0, -ENOMEM, or -ENOENT when profiling is off. */
int delta_base_init(struct delta_base *b);
/* Unmaps it. */
void delta_base_release(struct delta_base *b);
/* Reads the cumulative counts now. 0 or -ENOENT. */
int delta_mark(struct delta_base *b);

/*
 * Writes to fd (format fmt; `why` names it in the metadata) the profile of what was
 * allocated since b was read, holding `parts`; duration_nanos is set when with_duration.
 * When advance is 1, b becomes the reading this profile was made of (the next delta starts
 * exactly where this one ends: nothing counted twice nor lost). 0 or -errno of dump_fd_view.
 */
int delta_write(struct delta_base *b, int fd, enum dump_format fmt, const char *why, unsigned parts,
                int with_duration, int advance);

#endif
