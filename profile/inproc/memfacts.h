/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memfacts.h - the process's memory figures a dump and the statistics carry beside the heap
 * profile: the sampled heap, what the allocator holds, the resident set, and the cgroup's
 * usage and limit. One table of names, shared by the collector (lib/memacct.c fills it, the
 * writers print it), the readers (profile/textscan.c, pprof_read.c read it back) and the CLI.
 *
 * Plain data and an inline name table: no allocation, usable inside the host. Not the code
 * that measures (lib/memacct.c) nor the one that prints a summary line (cli/memline.c).
 */
#ifndef HEAPTAP_PROFILE_MEMFACTS_H
#define HEAPTAP_PROFILE_MEMFACTS_H

#include <stdint.h>

enum memfact {
	MF_HEAP_LIVE,        /* the sampled live heap, unbiased estimate (bytes) */
	MF_HEAP_PEAK,        /* its maximum since start or reset */
	MF_ALLOC_IN_USE,     /* bytes the allocator has handed out and not taken back */
	MF_ALLOC_FREE,       /* bytes the allocator holds in memory but not in use */
	MF_ALLOC_TRIMMABLE,  /* the part of allocator_free it could give back now (malloc_trim,
	                        jemalloc's dirty and muzzy pages, tcmalloc's page heap) */
	MF_ALLOC_MAPPED,     /* address space the allocator mapped */
	MF_RSS,              /* resident set of the process */
	MF_RSS_ANON,         /* anonymous part (heap, stacks, anonymous mappings) */
	MF_RSS_FILE,         /* file-backed and shared-memory part */
	MF_SWAP,             /* swapped out */
	MF_CGROUP_USAGE,     /* the memory cgroup's usage, 0 when none */
	MF_CGROUP_LIMIT,     /* its effective limit, 0 when none */
	MF_COUNT
};

/* The figures of one moment. v[] is 0 where a figure is unknown. */
struct memfacts {
	int present;            /* 1 when the figures were taken */
	const char *allocator;  /* "glibc", "jemalloc", "tcmalloc", or "" (unknown: no allocator figures) */
	uint64_t v[MF_COUNT];
};

/* The key of figure i in the statistics JSON, and after "memory." in the dumps' metadata. */
static inline const char *memfacts_name(int i)
{
	switch (i) {
	case MF_HEAP_LIVE: return "heap_live_estimate";
	case MF_HEAP_PEAK: return "heap_peak_estimate";
	case MF_ALLOC_IN_USE: return "allocator_in_use";
	case MF_ALLOC_FREE: return "allocator_free";
	case MF_ALLOC_TRIMMABLE: return "allocator_trimmable";
	case MF_ALLOC_MAPPED: return "allocator_mapped";
	case MF_RSS: return "rss";
	case MF_RSS_ANON: return "rss_anon";
	case MF_RSS_FILE: return "rss_file";
	case MF_SWAP: return "swap";
	case MF_CGROUP_USAGE: return "cgroup_usage";
	case MF_CGROUP_LIMIT: return "cgroup_limit";
	default: return "";
	}
}

#endif
