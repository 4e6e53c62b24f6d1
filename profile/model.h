/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * model.h - the analyzer's in-memory heap profile: weighted stacks of addresses, the memory
 * map they came from, and (when the input carried them) symbols.
 *
 * Every reader (jemalloc/heaptap heap_v2, gperftools legacy text, pprof protobuf, jeprof's
 * --raw symbolized files) produces one of these; every command (top, diff, collapsed,
 * callgraph, flame, report, pprof) consumes one. Values are stored UNSAMPLED (already scaled
 * the way the format's own tools scale them, as doubles; truncation happens only when
 * printing), so a merged or subtracted profile is just a sum. CLI only: this allocates
 * freely and is never linked into libheaptap.so.
 */
#ifndef HEAPTAP_PROFILE_MODEL_H
#define HEAPTAP_PROFILE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "inproc/memfacts.h"

/* Value indexes, in jeprof's order (its HeapProfileIndex). */
enum prof_value {
	PV_INUSE_OBJS = 0,
	PV_INUSE_BYTES = 1,
	PV_ALLOC_OBJS = 2,
	PV_ALLOC_BYTES = 3,
	PV_COUNT = 4
};

struct prof_sample {
	uint64_t *addrs;   /* leaf first. Each is a lookup address: it already points INTO the
	                      call instruction (return address - 1 where the format's convention
	                      says so), so the symbolizer resolves it as is. */
	uint32_t naddrs;   /* >= 1 */
	double v[PV_COUNT];/* unsampled values; alloc pair is 0 when the input had none */
	double xfree;      /* heaptap dumps: bytes of this stack freed by another thread than the
	                      one that allocated them (cumulative estimate), else 0 */
};

struct prof_mapping {
	uint64_t start, limit, offset;
	char *path;        /* as the input named it; "" when unknown */
	char *build_id;    /* lowercase hex, or NULL */
	int unloaded;      /* the collector saw it dlclose'd */
};

/* One resolved frame; a lookup address resolves to a chain of these (inlines). */
struct prof_frame {
	const char *func;  /* demangled function name, or NULL when unknown */
	const char *file;  /* source file, or NULL */
	int line;          /* 0 when unknown */
};

/* The symbols of one address: frames[0] is the innermost (inlined callee), the last one is
   the function that really contains the address. */
struct prof_symbol {
	uint64_t addr;
	uint32_t nframes;
	struct prof_frame *frames;
	const char *module; /* path of the mapping it belongs to, or NULL */
};

struct prof_symtab; /* addr -> prof_symbol; see symtab.h */

/* What a heaptap dump says its stacks do not show (dumpsrc.h's dump_losses, read back);
   all 0 with known 0 for other profilers' files. */
struct prof_losses {
	int known;
	uint64_t samples, dropped_samples, dropped_bytes, truncated_samples, truncated_bytes,
		unwind_failed;
	uint64_t recycled_stacks, recycled_objs, recycled_bytes; /* delta profiles: allocations
	                                   in the window from stacks recycled meanwhile */
};

struct profile {
	struct prof_sample *samples;
	size_t nsamples, cap;

	struct prof_mapping *maps;
	size_t nmaps, maps_cap;

	char *format;        /* "heap_v2", "heapprofile", "heap", "pprof", "raw", ... */
	uint64_t period;     /* sampling period R in bytes (0 = unknown / not sampled) */
	int has_alloc;       /* 1 when the alloc pair carries data */
	int64_t time_ns;     /* wall-clock time of the dump, 0 when unknown */
	int pid;             /* 0 when unknown */
	char *cmdline;       /* NULL when unknown */
	char *exe_path;      /* the program, when the input names it (heaptap metadata, --raw binary=) */
	char *source;        /* file name the profile came from (for messages) */
	int jemalloc_frames; /* 1 when frames inside the allocator may lead stacks (jemalloc dumps):
	                        renderers then trim them by name as jeprof does */
	char *trigger;       /* heaptap dumps: what wrote it ("final", "interval", ...), else NULL */
	int64_t start_time_ns;/* heaptap dumps: when the collector started, 0 when unknown */
	unsigned long skipped_lines; /* lines the reader did not understand and skipped (as jeprof does) */
	struct prof_losses losses; /* heaptap dumps: samples dropped, stacks cut */
	struct memfacts mem; /* heaptap dumps: the process's memory at the dump (mem.present 0: none);
	                        mem.allocator lives in the arena */
	char *reason;        /* heaptap dumps: why it was written, in words (memory pressure), else NULL */
	int cpu;             /* 1: a CPU profile: PV_INUSE_OBJS holds samples and PV_INUSE_BYTES CPU
	                        nanoseconds (the alloc pair is 0); period is in nanoseconds */

	struct prof_symtab *syms; /* symbols the input carried, or NULL */

	/* Arena for strings and address arrays owned by the profile. */
	void *arena;
};

/* Sets the count of dump_losses named key[0..klen) from decimal text v; 1 if key is one of
   them (and marks the losses known), else 0. */
int profile_loss_set(struct prof_losses *l, const char *key, size_t klen, const char *v);

/* Initialises an empty profile. */
void profile_init(struct profile *p);
/* Frees everything the profile owns and leaves it empty (re-initialised). */
void profile_release(struct profile *p);

/* Appends a sample (copies addrs). Identical stacks are NOT merged here; see profile_compact. */
void profile_add(struct profile *p, const uint64_t *addrs, uint32_t naddrs, const double v[PV_COUNT]);
/* Appends a mapping (copies the strings). */
void profile_add_mapping(struct profile *p, uint64_t start, uint64_t limit, uint64_t offset,
                         const char *path, const char *build_id);
/* Merges samples with identical address lists, summing values; drops all-zero samples. */
void profile_compact(struct profile *p);
/* Adds every sample and missing mapping of src to dst, values multiplied by sign (+1 merge,
   -1 subtract, as jeprof --base does). Afterwards dst holds each stack once (identical stacks
   summed, like profile_compact) but all-zero samples are kept; symbols of src are added to
   dst->syms. src must not be dst. dst keeps an index of its stacks between calls, so merging
   many profiles into one costs only their own size; reordering or filtering dst->samples by
   hand is noticed and the index rebuilt, but after changing a sample's addresses in place call
   profile_compact (which always rebuilds it) before the next merge. */
void profile_merge(struct profile *dst, const struct profile *src, double sign);
/* Returns the mapping containing addr, or NULL. */
const struct prof_mapping *profile_find_mapping(const struct profile *p, uint64_t addr);
/* Copies a string into the profile's arena. */
char *profile_strdup(struct profile *p, const char *s);
/* Takes one heaptap metadata item (key of klen bytes, NUL-terminated value) that is about
   memory: "memory.<name>" (memfacts.h) or "reason". Returns 1 when it was one, else 0. */
int profile_meta_memory(struct profile *p, const char *key, size_t klen, const char *v);
/* Sum of value index k over all samples. */
double profile_total(const struct profile *p, int k);

/* Returns every distinct address of every sample, sorted ascending, in a malloc'd array the
   caller frees; *n receives the count. For resolving each address once. */
uint64_t *profile_unique_addrs(const struct profile *p, size_t *n);

#endif
