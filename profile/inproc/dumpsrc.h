/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dumpsrc.h - what the collector hands to the in-process profile writers at dump time.
 *
 * A dump_source is a read-only view of one consistent snapshot: the sampled stacks with
 * their UNBIASED estimates (already divided by the sampling probability), the process's
 * memory map, and a few facts about the process. The writers (heapv2_write.h,
 * pprof_write.h) turn it into bytes; they never see the collector's tables, and the
 * collector never formats. Everything here is plain data or a callback: no allocation is
 * implied, so the writers can run inside the host process.
 */
#ifndef HEAPTAP_PROFILE_DUMPSRC_H
#define HEAPTAP_PROFILE_DUMPSRC_H

#include <stddef.h>
#include <stdint.h>

#include "memfacts.h"

/* One distinct call stack and what it holds. */
struct dump_stack {
	const uintptr_t *pcs; /* return addresses as unwound, leaf first; pcs[0] is the
	                         return address into the first frame that is not the profiler's
	                         nor the allocator's (the caller of malloc / operator new). */
	uint32_t depth;       /* number of pcs, >= 1 */
	double live_objs;     /* unbiased estimate of objects of this stack alive now */
	double live_bytes;    /* unbiased estimate of their bytes (requested sizes) */
	double alloc_objs;    /* unbiased cumulative allocations (0 unless prof_accum) */
	double alloc_bytes;   /* unbiased cumulative bytes (0 unless prof_accum) */
	uint64_t live_samples;/* raw number of sampled objects alive (for statistics) */
	double xfree_objs;    /* unbiased cumulative objects of this stack freed by another thread
	                         than the one that allocated them */
	double xfree_bytes;   /* their bytes */
};

/* One mapping of an ELF file (or anonymous executable region) in the process. */
struct dump_mapping {
	uint64_t start, limit;  /* [start, limit) virtual addresses */
	uint64_t offset;        /* file offset of start */
	const char *path;       /* NUL-terminated; "" when anonymous */
	const uint8_t *build_id;/* GNU build ID bytes, or NULL */
	uint32_t build_id_len;
	char perms[5];          /* "r-xp" as in /proc/self/maps, NUL-terminated */
	int unloaded;           /* 1 when the object was dlclose'd since (kept so old frames resolve) */
};

/* What the stacks do not show (counts since the collector started or was reset): samples it
   could not keep and stacks it cut. The writers put them in every dump. */
struct dump_losses {
	uint64_t samples;           /* sampled allocations */
	uint64_t dropped_samples;   /* samples in no stack: a table's budget, or no memory */
	uint64_t dropped_bytes;     /* the unbiased bytes they stood for when allocated */
	uint64_t truncated_samples; /* samples whose stack was cut at prof_bt_max (their outermost
	                               frame is heaptap_truncated_stack) */
	uint64_t truncated_bytes;   /* the unbiased bytes they stood for when allocated */
	uint64_t unwind_failed;     /* samples whose stack could not be unwound (frame 0x0) */
	/* delta profiles only (delta.c): allocations in the window from stacks the table
	   recycled before the snapshot, so in no stack of the profile; written only when not 0 */
	uint64_t recycled_stacks;   /* stacks recycled during the window */
	uint64_t recycled_objs;     /* the objects and unbiased bytes allocated from them in it */
	uint64_t recycled_bytes;
};

struct dump_source {
	uint64_t sample_period;   /* R = 2^lg_prof_sample, mean bytes between samples (1 = every allocation) */
	int accum;                /* 1 when alloc_* values are maintained (prof_accum) */
	int64_t time_ns;          /* wall-clock time of the snapshot, ns since the Unix epoch */
	int64_t start_time_ns;    /* wall-clock time the collector started */
	int pid;
	const char *exe_path;     /* readlink("/proc/self/exe"), NUL-terminated */
	const char *cmdline;      /* command line, arguments separated by single spaces */
	const char *trigger;      /* "final", "interval", "gdump", "manual", "time", "signal", "http",
	                             "oom", "peak" */
	const char *reason;       /* why this dump, in words (memory-pressure dumps), or NULL */
	struct memfacts memory;   /* the process's memory at the snapshot (memory.present 0: none) */
	struct dump_losses losses;

	/* The text of /proc/self/maps, verbatim, followed by synthetic lines in the same format
	   for objects unloaded since they were sampled. */
	const char *maps_text;
	size_t maps_len;
	/* The same map, parsed, executable mappings only, main program first. */
	const struct dump_mapping *mappings;
	size_t nmappings;

	/* Calls fn once for every stack with a nonzero live or alloc estimate, in no particular
	   order, stopping early when fn returns nonzero (and returning that value). Returns 0
	   after a complete walk. Must not be called concurrently with itself. */
	int (*for_each_stack)(const struct dump_source *src,
	                      int (*fn)(void *ctx, const struct dump_stack *st), void *ctx);
	void *priv;               /* the collector's */
};

#endif
