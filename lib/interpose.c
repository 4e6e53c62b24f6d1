/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * interpose.c - the exported malloc family (and dlclose) of libheaptap.so: the fast paths.
 * Each allocation decrements the thread's byte countdown and forwards to the real allocator;
 * only when the countdown runs out (a sample, a thread's first call, a re-arm) does it go to
 * core.c. Each free compares the pointer with the sampled-object zone's range (sampzone.h)
 * and, only once a sampled block may live outside it, checks the sampled-pointer filter too.
 *
 * This file holds nothing else, so every other module links without interposing (unit
 * tests). All functions live in section heaptap_text, so captured stacks start in the caller;
 * each fast path is core_fast_take (core.h) and a call of the real function.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "cfi.h"
#include "core.h"
#include "livetab.h"
#include "real.h"
#include "sampzone.h"

#define EXPORT HEAPTAP_EXPORT

/* malloc: the countdown and one call counter (tstate.h). */
HEAPTAP_TEXT EXPORT void *malloc(size_t n)
{
	if (core_fast_take(FN_MALLOC, n))
		return real.malloc(n);
	return core_alloc_slow(FN_MALLOC, n, 0);
}

/* 1 if p is in the sampled-object zone's range: a subtraction and a comparison with the base
   kept in real.free's cache line (no zone: a base no user pointer reaches, not even NULL). */
static inline int in_zone(const void *p)
{
	return (uintptr_t)p - real.zone_base < SAMPZONE_SIZE;
}

/*
 * free: a zone block goes to the zone. Nothing is counted on the fast way (not even the call:
 * that increment was most of what free cost beyond its comparisons); the call is counted on
 * the two slow branches, and with stats_exact every free takes one of them (the filter is all
 * pinned; the zone's range then holds the bootstrap pool only). While every sampled block
 * lives in the zone (real.filter_needed 0, the usual case at the default rate) nothing else
 * can be sampled, and the pointer goes to the real free without a load of the filter;
 * free(NULL) too (the real free takes NULL; before real_resolve, real.free is real.c's
 * early_free, which also does).
 * Once a sampled block may live outside the zone (a period below SAMPZONE_MIN_PERIOD,
 * prof_zone:false, a zone that refused, bootstrap pool blocks, stats_exact), the filter is
 * asked as before: NULL, the pool and every granule holding a sampled block have their bit
 * set (real.c pins the first two); on a hit NULL returns at once, and the granule's word
 * tells most neighbours of a sample from the sample itself (livetab.h).
 */
HEAPTAP_TEXT EXPORT void free(void *p)
{
	if (unlikely(in_zone(p))) {
		tstate_tls.calls[FN_FREE]++;
		core_zone_free(p);
		return;
	}
	if (unlikely(real.filter_needed) && livetab_filter_hit(p)) {
		tstate_tls.calls[FN_FREE]++;
		if (!p)
			return;
		if (livetab_may_hold(p)) {
			core_free_slow(p);
			return;
		}
	}
	real.free(p);
}

/* C23's sized frees (glibc 2.39 exports them): ours, so a zone block never reaches glibc's. */
HEAPTAP_TEXT EXPORT void free_sized(void *p, size_t n)
{
	(void)n;
	free(p);
}

HEAPTAP_TEXT EXPORT void free_aligned_sized(void *p, size_t align, size_t n)
{
	(void)align;
	(void)n;
	free(p);
}

HEAPTAP_TEXT EXPORT void cfree(void *p)
{
	free(p);
}

HEAPTAP_TEXT EXPORT void *calloc(size_t nmemb, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(nmemb, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	if (core_fast_take(FN_CALLOC, n))
		return real.calloc(nmemb, size);
	return core_calloc_slow(nmemb, size);
}

HEAPTAP_TEXT EXPORT void *realloc(void *p, size_t n)
{
	/* zone blocks (the bootstrap pool's too), p == NULL and n == 0 (wraps) go slow. As in
	   free, the filter is asked only once a sampled block may live outside the zone (its
	   load was most of this path's cost); it is kept either way (livetab.h). */
	if (likely(p && !in_zone(p) &&
	           (!real.filter_needed || !livetab_maybe_sampled(p))) &&
	    core_fast_take(FN_REALLOC, n))
		return real.realloc(p, n);
	return core_realloc_slow(p, n);
}

HEAPTAP_TEXT EXPORT void *reallocarray(void *p, size_t nmemb, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(nmemb, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	tstate_tls.calls[FN_REALLOCARRAY]++;
	return realloc(p, n);
}

static int bad_align(size_t a)
{
	return a == 0 || (a & (a - 1)) != 0;
}

HEAPTAP_TEXT EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (bad_align(align) || align % sizeof(void *) != 0)
		return EINVAL;
	if (core_fast_take(FN_POSIX_MEMALIGN, n))
		return real.posix_memalign(out, align, n);
	void *p = core_alloc_slow(FN_POSIX_MEMALIGN, n, align);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

HEAPTAP_TEXT EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (bad_align(align)) {
		errno = EINVAL;
		return NULL;
	}
	if (core_fast_take(FN_ALIGNED_ALLOC, n))
		return real.aligned_alloc(align, n);
	return core_alloc_slow(FN_ALIGNED_ALLOC, n, align);
}

HEAPTAP_TEXT EXPORT void *memalign(size_t align, size_t n)
{
	if (bad_align(align)) {
		errno = EINVAL;
		return NULL;
	}
	if (core_fast_take(FN_MEMALIGN, n))
		return real.memalign(align, n);
	return core_alloc_slow(FN_MEMALIGN, n, align);
}

static size_t page_size(void)
{
	static size_t ps;
	if (!ps)
		ps = (size_t)sysconf(_SC_PAGESIZE);
	return ps;
}

HEAPTAP_TEXT EXPORT void *valloc(size_t n)
{
	size_t ps = page_size();
	if (core_fast_take(FN_VALLOC, n))
		return real.memalign(ps, n);
	return core_alloc_slow(FN_VALLOC, n, ps);
}

HEAPTAP_TEXT EXPORT void *pvalloc(size_t n)
{
	size_t ps = page_size();
	size_t r = (n + ps - 1) & ~(ps - 1);
	if (r < n) {
		errno = ENOMEM;
		return NULL;
	}
	if (r == 0)
		r = ps;
	if (core_fast_take(FN_PVALLOC, r))
		return real.memalign(ps, r);
	return core_alloc_slow(FN_PVALLOC, r, ps);
}

HEAPTAP_TEXT EXPORT size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (real_pool_owns(p))
		return real_pool_size(p);
	if (unlikely(!real_ready()))
		real_resolve();
	tstate_tls.calls[FN_USABLE_SIZE]++;
	if (unlikely(in_zone(p))) {
		size_t z = sampzone_size(&sampzone_main, p, tstate_tls.depth > 0);
		if (z == SIZE_MAX)
			return SAMPZONE_PAGE; /* busy under this thread: a lower bound */
		if (z)
			return z;
	}
	return real.malloc_usable_size(p);
}

HEAPTAP_TEXT EXPORT int dlclose(void *handle)
{
	if (unlikely(!real_ready()))
		real_resolve();
	int r = core_dlclose(handle);
	cfi_forget_all(); /* the unloaded code's addresses may be reused by the next dlopen */
	return r;
}
