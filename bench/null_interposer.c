/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * null_interposer.c - the floor of any LD_PRELOAD heap profiler, for bench/perf_overhead.sh:
 * a preloadable library whose malloc, free, calloc and realloc do nothing but forward to the
 * next definition (dlsym(RTLD_NEXT)). What it costs over the plain run is the extra call level
 * every interposer pays (the program's PLT call lands here, then an indirect jump reaches the
 * allocator); what heaptap costs over it is heaptap's own. Not a profiler, not a test.
 *
 * dlsym may allocate before the pointers are known: those few requests come from a static
 * pool whose blocks are never freed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

static void *(*next_malloc)(size_t);
static void (*next_free)(void *);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);

static _Alignas(16) char pool[64 * 1024];
static size_t pool_used;

static void *pool_alloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n > sizeof pool - pool_used)
		return NULL;
	void *p = pool + pool_used;
	pool_used += n;
	return p; /* static storage: already zero, as calloc wants */
}

static int pool_owns(const void *p)
{
	return (const char *)p >= pool && (const char *)p < pool + sizeof pool;
}

__attribute__((constructor)) static void resolve(void)
{
	next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
}

void *malloc(size_t n)
{
	if (__builtin_expect(!next_malloc, 0))
		return pool_alloc(n);
	return next_malloc(n);
}

void free(void *p)
{
	if (__builtin_expect(pool_owns(p) || !next_free, 0))
		return;
	next_free(p);
}

void *calloc(size_t n, size_t size)
{
	if (__builtin_expect(!next_calloc, 0))
		return __builtin_mul_overflow(n, size, &n) ? NULL : pool_alloc(n);
	return next_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	if (__builtin_expect(pool_owns(p) || !next_realloc, 0)) {
		/* a pool block moves out (its size is not kept: copy what the pool has after p) */
		void *q = malloc(n);
		if (q && pool_owns(p)) { /* (before resolve(), every block is the pool's) */
			size_t left = (size_t)(pool + sizeof pool - (const char *)p);
			memcpy(q, p, n < left ? n : left);
		}
		return q;
	}
	return next_realloc(p, n);
}
