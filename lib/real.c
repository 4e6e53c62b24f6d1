/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * real.c - finds the allocator below heaptap with dlsym(RTLD_NEXT) and serves the
 * allocations made while it does from a bootstrap pool (dlsym may call calloc for its error
 * state). Not the interposers (interpose.c) and not the sampler.
 */
#include "real.h"

#include "livetab.h"
#include "sampzone.h"

#include <dlfcn.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void early_free(void *p);

/* free is callable before real_resolve: free's fast path may forward NULL to it (NULL's
   filter granule is only pinned once real_resolve has run). */
_Alignas(64) struct real_fns real = {.zone_base = SAMPZONE_OFF, .filter_needed = 1, .free = early_free};

#define POOL_BYTES REAL_POOL_BYTES
#define pool real_pool
_Alignas(64) static unsigned char pool_static[REAL_POOL_BYTES];
unsigned char *real_pool = pool_static;
static size_t pool_used; /* atomic */

int real_resolve_state;                    /* 0 not started, 1 running, 2 done (atomic) */
static __thread int resolving_here __attribute__((tls_model("initial-exec")));

void *real_pool_alloc(size_t nbytes, size_t align)
{
	if (align < 16)
		align = 16;
	if (nbytes > POOL_BYTES)
		return NULL;
	size_t old = __atomic_load_n(&pool_used, __ATOMIC_RELAXED);
	for (;;) {
		/* 16-byte header before the block holds its size */
		uintptr_t base = (uintptr_t)pool + old + 16;
		uintptr_t blk = (base + align - 1) & ~(uintptr_t)(align - 1);
		size_t end = (size_t)(blk - (uintptr_t)pool) + nbytes;
		if (end > POOL_BYTES)
			return NULL;
		end = (end + 15) & ~(size_t)15;
		if (__atomic_compare_exchange_n(&pool_used, &old, end, 0, __ATOMIC_ACQ_REL,
		                                __ATOMIC_RELAXED)) {
			memcpy((void *)(blk - sizeof(size_t)), &nbytes, sizeof nbytes);
			return (void *)blk;
		}
	}
}

size_t real_pool_size(const void *p)
{
	size_t n;
	memcpy(&n, (const char *)p - sizeof n, sizeof n);
	return n;
}

/* Fallbacks for allocators below that lack one of the aligned entry points. */
static void *fallback_aligned_alloc(size_t align, size_t n)
{
	void *p = NULL;
	if (align < sizeof(void *))
		align = sizeof(void *);
	return real.posix_memalign(&p, align, n) == 0 ? p : NULL;
}

static size_t fallback_usable_size(void *p)
{
	(void)p;
	return 0;
}

static void early_free(void *p)
{
	if (!p || real_pool_owns(p))
		return;
	real_resolve();
	if (real.free != early_free)
		real.free(p);
}

static void *sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

struct real_cxx_fns real_cxx;

#define CXXOPS_NAME_(id, name) [id] = #name,
static const char *const cxx_names[RCXX_COUNT] = {CXX_OPERATORS(CXXOPS_NAME_)};
#undef CXXOPS_NAME_

/* Base address of the object that defines `fn`, or NULL. */
static void *object_of(void *fn)
{
	Dl_info di;
	if (!fn || !dladdr(fn, &di))
		return NULL;
	return di.dli_fbase;
}

/* The operator new/delete family: an entry is counted by heaptap's wrapper only when it is
   defined by the object that also gives us malloc (see real.h). */
static void resolve_cxx(void *malloc_fn)
{
	void *malloc_obj = object_of(malloc_fn);
	for (int i = 0; i < RCXX_COUNT; i++) {
		void *f = sym(cxx_names[i]);
		real_cxx.fn[i] = f;
		real_cxx.counts[i] = f && malloc_obj && object_of(f) == malloc_obj;
	}
	/* a counted throwing new samples through its nothrow twin (interpose_cxx.c) */
	static const int twin[][2] = {{RCXX_NEW, RCXX_NEW_NT}, {RCXX_NEW_ARR, RCXX_NEW_ARR_NT},
	                              {RCXX_NEW_AL, RCXX_NEW_AL_NT},
	                              {RCXX_NEW_ARR_AL, RCXX_NEW_ARR_AL_NT}};
	for (size_t i = 0; i < sizeof twin / sizeof twin[0]; i++)
		if (!real_cxx.fn[twin[i][1]])
			real_cxx.counts[twin[i][0]] = 0;
}

/* The functions looked up below heaptap: the field of struct real_fns each fills, and whether
   heaptap cannot work without it (the others get the fallbacks above). */
static const struct {
	const char *name;
	size_t offset;
	int required;
} hooks[] = {
#define HOOK(fn, required) {#fn, offsetof(struct real_fns, fn), required},
	HOOK(malloc, 1) HOOK(free, 1) HOOK(calloc, 1) HOOK(realloc, 1) HOOK(posix_memalign, 1)
	HOOK(aligned_alloc, 0) HOOK(memalign, 0) HOOK(malloc_usable_size, 0) HOOK(dlclose, 1)
#undef HOOK
};

void real_resolve(void)
{
	int st = __atomic_load_n(&real_resolve_state, __ATOMIC_ACQUIRE);
	if (st == 2)
		return;
	st = 0;
	if (!__atomic_compare_exchange_n(&real_resolve_state, &st, 1, 0, __ATOMIC_ACQ_REL,
	                                 __ATOMIC_ACQUIRE)) {
		if (resolving_here)
			return;
		while (__atomic_load_n(&real_resolve_state, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
		return;
	}
	resolving_here = 1;
	/* the pool at the zone's base: free's range test covers it (sampzone.h) */
	uintptr_t zb = sampzone_pick_base();
	void *m = sampzone_map_exact(zb, REAL_POOL_BYTES);
	if (m == (void *)zb) {
		real_pool = m;
		__atomic_store_n(&real.zone_base, zb, __ATOMIC_RELEASE);
	} else if (m != MAP_FAILED) {
		munmap(m, REAL_POOL_BYTES); /* a kernel without MAP_FIXED_NOREPLACE */
	}
	/* before the first pool block exists: free's fast path sends NULL and pool blocks to
	   the slow path through the filter */
	livetab_filter_pin(NULL, 1);
	livetab_filter_pin(real_pool, REAL_POOL_BYTES);
	struct real_fns r;
	memset(&r, 0, sizeof r);
	for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++) {
		void *f = sym(hooks[i].name);
		memcpy((char *)&r + hooks[i].offset, &f, sizeof f);
		if (!f && hooks[i].required) {
			static const char msg[] = "heaptap: cannot find the real malloc family (dlsym RTLD_NEXT)\n";
			(void)!write(2, msg, sizeof msg - 1);
			_exit(127);
		}
	}
	if (!r.aligned_alloc)
		r.aligned_alloc = fallback_aligned_alloc;
	if (!r.memalign)
		r.memalign = fallback_aligned_alloc;
	if (!r.malloc_usable_size)
		r.malloc_usable_size = fallback_usable_size;
	resolve_cxx((void *)r.malloc);
	/* no sample exists yet; pool blocks outside the zone's range (pinned in the filter)
	   keep the filter on for good, as they may be freed at any time */
	r.zone_base = real.zone_base;
	r.filter_needed = r.zone_base == SAMPZONE_OFF && __atomic_load_n(&pool_used, __ATOMIC_RELAXED) != 0;
	real = r;
	resolving_here = 0;
	__atomic_store_n(&real_resolve_state, 2, __ATOMIC_RELEASE);
}
