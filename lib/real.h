/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * real.h - the allocator below heaptap: the next definitions of the malloc family found with
 * dlsym(RTLD_NEXT, ...) (glibc's, or a preloaded jemalloc/tcmalloc), plus the small static
 * pool that serves the allocations dlsym itself makes before those are known.
 *
 * Not an allocator of its own: the pool is only for bootstrap and never frees. real_resolve
 * is idempotent and thread-safe; the pool functions are lock-free.
 */
#ifndef HEAPTAP_LIB_REAL_H
#define HEAPTAP_LIB_REAL_H

#include <stddef.h>
#include <stdint.h>

#include "cxxops.h"

struct real_fns {
	/* Not functions, but kept in free's cache line with them: the sampled-object zone's
	   base (sampzone.h; SAMPZONE_OFF while there is none), and 1 once any sampled block may
	   live outside the zone (or a bootstrap pool block may be freed, or stats_exact wants
	   every free): then free also asks the sampled-pointer filter. Sticky. */
	uintptr_t zone_base;
	uintptr_t filter_needed;
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	size_t (*malloc_usable_size)(void *);
	int (*dlclose)(void *);
};

/*
 * The C++ operator new/delete family below heaptap (interpose_cxx.c), indexed by enum
 * real_cxx (cxxops.h). Any may be NULL (a C program without libstdc++). `counts` says, per entry, whether
 * heaptap's wrapper must count and sample the call itself: 1 when the next definition lives
 * in the same object as the next malloc (jemalloc, tcmalloc, mimalloc: their operator new
 * calls their allocator internally), 0 when it is elsewhere (libstdc++: it calls malloc,
 * which heaptap already counts).
 */
struct real_cxx_fns {
	void *fn[RCXX_COUNT];
	unsigned char counts[RCXX_COUNT];
};
extern struct real_cxx_fns real_cxx __attribute__((visibility("hidden")));

/* The real functions; all non-NULL once real_resolve() returned (the optional ones fall
   back to wrappers over posix_memalign). */
extern struct real_fns real __attribute__((visibility("hidden")));

/* Sets real.filter_needed for good. */
static inline void real_need_filter(void)
{
	if (!__atomic_load_n(&real.filter_needed, __ATOMIC_RELAXED))
		__atomic_store_n(&real.filter_needed, 1, __ATOMIC_RELAXED);
}

/* Looks the real functions up (once). While it runs, allocation requests from the same
   thread are served by real_pool_alloc. Other threads wait until it is done. */
void real_resolve(void);
/* 0 not started, 1 running, 2 done (atomic; real.c writes it) */
extern int real_resolve_state __attribute__((visibility("hidden")));
/* 1 once real_resolve finished (inline: every slow path asks it). */
static inline int real_ready(void)
{
	return __atomic_load_n(&real_resolve_state, __ATOMIC_ACQUIRE) == 2;
}

/* Bootstrap pool: 16-byte aligned (or `align`) blocks, zeroed; NULL when exhausted. Blocks
   are never reused. The pool is mapped at the start of the sampled-object zone's range
   (real.zone_base), so free's range test sends its blocks to the slow path, or, when that
   mapping fails, is a static array (then real.filter_needed is set once a block was given). */
void *real_pool_alloc(size_t nbytes, size_t align);
#define REAL_POOL_BYTES (64 * 1024)
extern unsigned char *real_pool __attribute__((visibility("hidden")));

/* 1 if p points into the pool (inline: free's fast path asks it). */
static inline int real_pool_owns(const void *p)
{
	return (uintptr_t)p - (uintptr_t)real_pool < REAL_POOL_BYTES;
}
/* Usable size of a pool block. */
size_t real_pool_size(const void *p);

#endif
