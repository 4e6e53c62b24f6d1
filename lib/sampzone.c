/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sampzone.c - the sampled-object zone of sampzone.h: slabs of page runs for small sampled
 * blocks, one mapping each for large ones, and the zone's own index of both. Not the fast
 * path's range test (interpose.c, against real.h's copy of the base) and not the profile.
 *
 * The slab region's index is one 32-bit word per page of each mapped slab (found through a
 * directory with a pointer per slab slot): at the first page of a run, bits 28-30 its length
 * in pages (1-4) and bit 31 set while it is handed out; while it is free, bits 0-27 the next
 * free run of its length (page + 1, 0 = none). Runs never cross a slab. The large region's
 * index is an open-addressing table (linear probing, backward-shift deletion) of (address,
 * length), doubled at half load. All of it is mapped here, never taken from the host's malloc.
 */
#include "sampzone.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../base/bisect.h"
#include "../base/pages.h"
#include "sys.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define META_LIVE 0x80000000u
#define META_LEN_SHIFT 28
#define META_LEN_MASK 7u
#define META_NEXT_MASK 0x0fffffffu
#define MAX_RUN 4u
/* NOREPLACE attempts per request before the zone gives up on it */
#define MAX_TRIES 16
#define BIG_MIN_SLOTS 256
/* bytes of one chunk of slab index words */
#define META_CHUNK_BYTES ((size_t)SAMPZONE_META_CHUNK_SLABS * SAMPZONE_SLAB_PAGES * sizeof(uint32_t))

struct sampzone sampzone_main = {.lock = RANKED_MUTEX_INITIALIZER(LOCKRANK_ZONE),
                                 .base = SAMPZONE_OFF};

void sampzone_init(struct sampzone *z, uintptr_t base, size_t small_bytes, size_t large_bytes)
{
	struct ranked_mutex l = RANKED_MUTEX_INITIALIZER(LOCKRANK_ZONE);
	memset(z, 0, sizeof *z);
	z->lock = l;
	z->base = base;
	z->small_bytes = small_bytes / SAMPZONE_SLAB * SAMPZONE_SLAB;
	z->large_bytes = large_bytes / SAMPZONE_PAGE * SAMPZONE_PAGE;
	z->cache_max = SAMPZONE_CACHE_BYTES;
}

uintptr_t sampzone_pick_base(void)
{
	/* 1 TiB slots 16-63: far below mmap(NULL)'s top-down placement, above brk heaps */
	uint64_t slot = 16 + sys_random_u64() % 48;
	return (uintptr_t)(slot << 40);
}

/* Maps len bytes exactly at hint: 0 done, 1 something is there, -1 failed (no memory, or a
   kernel that takes MAP_FIXED_NOREPLACE as a hint: then the zone is broken for good). */
void *sampzone_map_exact(uintptr_t hint, size_t len)
{
#ifdef __SANITIZE_THREAD__
	/* ThreadSanitizer's shadow memory covers the zone's range: no zone in its builds */
	(void)hint;
	(void)len;
	errno = ENOMEM;
	return MAP_FAILED;
#else
	/* the system call itself: a sanitizer's mmap interceptor aborts on an address in its
	   shadow, where the kernel's NOREPLACE only refuses (EEXIST: its shadow is mapped) */
	long r = syscall(SYS_mmap, hint, len, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	return r == -1 ? MAP_FAILED : (void *)r;
#endif
}

static int map_at(struct sampzone *z, uintptr_t hint, size_t len)
{
	void *p = sampzone_map_exact(hint, len);
	if (p == MAP_FAILED)
		return errno == EEXIST ? 1 : -1;
	if ((uintptr_t)p != hint) {
		munmap(p, len);
		z->broken = 1;
		return -1;
	}
	return 0;
}

static int lock(struct sampzone *z, int nested)
{
	if (!nested) {
		lockrank_lock(&z->lock);
		return 0;
	}
	return lockrank_trylock(&z->lock);
}

/* ---- small blocks: page runs in slabs ---- */

/* The index word of slab-region page pg (its slab is mapped). */
static uint32_t *meta_word(const struct sampzone *z, uint32_t pg)
{
	return &z->slab_meta[pg / SAMPZONE_SLAB_PAGES][pg % SAMPZONE_SLAB_PAGES];
}

/* The index word of slab-region page pg, or NULL when its slab is not mapped (yet): for any
   page, without the lock (a caller's own block's word does not change under it). */
static const uint32_t *word_if_mapped(const struct sampzone *z, uint32_t pg)
{
	uint32_t **dir = __atomic_load_n(&z->slab_meta, __ATOMIC_ACQUIRE);
	const uint32_t *m = dir ? __atomic_load_n(&dir[pg / SAMPZONE_SLAB_PAGES], __ATOMIC_ACQUIRE) : NULL;
	return m ? &m[pg % SAMPZONE_SLAB_PAGES] : NULL;
}

static void push_free(struct sampzone *z, uint32_t pg, uint32_t len)
{
	*meta_word(z, pg) = (len << META_LEN_SHIFT) | z->free_head[len];
	z->free_head[len] = pg + 1;
}

/* Zeroed index words for one slab, cut from the current chunk (a new one mapped when it is
   used up), or NULL. */
static uint32_t *slab_words(struct sampzone *z)
{
	if (!z->meta_chunks || z->meta_chunk_used == SAMPZONE_META_CHUNK_SLABS) {
		if (z->meta_chunks == SAMPZONE_META_CHUNKS)
			return NULL;
		uint32_t *c = pages_map(META_CHUNK_BYTES);
		if (!c)
			return NULL;
		z->meta_chunk[z->meta_chunks++] = c;
		z->meta_chunk_used = 0;
		z->index_bytes += META_CHUNK_BYTES;
	}
	return z->meta_chunk[z->meta_chunks - 1] + (size_t)z->meta_chunk_used++ * SAMPZONE_SLAB_PAGES;
}

/* Maps the next slab (skipping slots taken by someone else); 0 or -1. */
static int new_slab(struct sampzone *z)
{
	size_t slots = z->small_bytes / SAMPZONE_SLAB;
	if (!z->slab_meta) {
		void *d = pages_map(slots * sizeof(uint32_t *));
		if (!d)
			return -1;
		z->index_bytes += slots * sizeof(uint32_t *);
		__atomic_store_n(&z->slab_meta, (uint32_t **)d, __ATOMIC_RELEASE);
	}
	uint32_t *words = slab_words(z);
	if (!words)
		return -1;
	for (int tries = 0; tries < MAX_TRIES; tries++) {
		if (z->slab_next + SAMPZONE_SLAB > z->small_bytes)
			break;
		size_t off = z->slab_next;
		z->slab_next += SAMPZONE_SLAB;
		int r = map_at(z, z->base + off, SAMPZONE_SLAB);
		if (r < 0)
			break;
		if (r > 0)
			continue;
		/* the old slab's tail (< MAX_RUN pages) becomes a free run */
		if (z->bump < z->bump_end)
			push_free(z, z->bump, z->bump_end - z->bump);
		__atomic_store_n(&z->slab_meta[off / SAMPZONE_SLAB], words, __ATOMIC_RELEASE);
		z->bump = (uint32_t)(off / SAMPZONE_PAGE);
		z->bump_end = z->bump + SAMPZONE_SLAB_PAGES;
		z->mapped += SAMPZONE_SLAB;
		return 0;
	}
	z->meta_chunk_used--; /* the words go to the next slab instead (still zero) */
	return -1;
}

static void *alloc_small(struct sampzone *z, uint32_t pages, int zero)
{
	uint32_t pg;
	int reused = 0;
	if (z->free_head[pages]) {
		pg = z->free_head[pages] - 1;
		z->free_head[pages] = *meta_word(z, pg) & META_NEXT_MASK;
		reused = 1;
	} else {
		if (z->bump_end - z->bump < pages && new_slab(z) < 0)
			return NULL;
		pg = z->bump;
		z->bump += pages;
	}
	*meta_word(z, pg) = META_LIVE | (pages << META_LEN_SHIFT);
	z->live++;
	void *p = (void *)(z->base + (uintptr_t)pg * SAMPZONE_PAGE);
	if (zero && reused)
		memset(p, 0, (size_t)pages * SAMPZONE_PAGE);
	return p;
}

/* ---- large blocks: a mapping each, indexed by address ---- */

static size_t big_home(const struct sampzone *z, uintptr_t p)
{
	return (size_t)(((uint64_t)(p >> 12) * 0x9e3779b97f4a7c15ull) >> 32) & (z->big_cap - 1);
}

static void big_put(struct sampzone *z, uintptr_t p, size_t len)
{
	size_t i = big_home(z, p);
	while (z->big[i].ptr)
		i = (i + 1) & (z->big_cap - 1);
	z->big[i].ptr = p;
	z->big[i].len = len;
	z->big_n++;
}

/* Room for one more entry at half load at most; 0 or -1. */
static int big_reserve(struct sampzone *z)
{
	if ((z->big_n + 1) * 2 <= z->big_cap)
		return 0;
	size_t ncap = z->big_cap ? z->big_cap * 2 : BIG_MIN_SLOTS;
	size_t nb = ncap * sizeof(struct sampzone_big);
	void *m = pages_map(nb);
	if (!m)
		return -1;
	struct sampzone_big *old = z->big;
	size_t ocap = z->big_cap;
	z->big = m;
	z->big_cap = ncap;
	z->big_n = 0;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].ptr)
			big_put(z, old[i].ptr, old[i].len);
	pages_unmap(old, ocap * sizeof *old);
	z->index_bytes -= ocap * sizeof *old;
	z->index_bytes += nb;
	return 0;
}

static long big_find(const struct sampzone *z, uintptr_t p)
{
	if (!z->big_cap)
		return -1;
	for (size_t i = big_home(z, p);; i = (i + 1) & (z->big_cap - 1)) {
		if (z->big[i].ptr == p)
			return (long)i;
		if (!z->big[i].ptr)
			return -1;
	}
}

/* Empties slot i, shifting back the entries of its cluster that would be lost. */
static void big_del(struct sampzone *z, size_t i)
{
	size_t mask = z->big_cap - 1;
	for (;;) {
		z->big[i].ptr = 0;
		size_t j = i;
		for (;;) {
			j = (j + 1) & mask;
			if (!z->big[j].ptr) {
				z->big_n--;
				return;
			}
			size_t k = big_home(z, z->big[j].ptr);
			/* j's entry stays unless its home is cyclically outside (i, j] */
			int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
			if (!stays) {
				z->big[i] = z->big[j];
				i = j;
				break;
			}
		}
	}
}

/* The cache is kept sorted by length (cache_pages ascending): a take or a put is one binary
   search and one move of the entries after it, not a scan of every slot. */
static uint64_t cache_key(const void *ctx, size_t i)
{
	return ((const struct sampzone *)ctx)->cache_pages[i];
}

/* A cached mapping of at least len bytes and at most half as much again (the smallest such:
   best fit), taken out of the cache; 0 if none. Its pages are the previous block's: not zero. */
static size_t cache_take(struct sampzone *z, size_t len, uintptr_t *out)
{
	uint32_t want = (uint32_t)(len / SAMPZONE_PAGE);
	size_t i = bisect_count_lt(z->cache_n, want, cache_key, z);
	if (i == z->cache_n || z->cache_pages[i] - want > want / 2)
		return 0;
	size_t got = (size_t)z->cache_pages[i] * SAMPZONE_PAGE;
	*out = z->cache_ptr[i];
	size_t after = z->cache_n - i - 1;
	memmove(&z->cache_pages[i], &z->cache_pages[i + 1], after * sizeof z->cache_pages[0]);
	memmove(&z->cache_ptr[i], &z->cache_ptr[i + 1], after * sizeof z->cache_ptr[0]);
	z->cache_n--;
	z->cache_bytes -= got;
	return got;
}

/* Keeps a released mapping for reuse when there is room: 1 kept, 0 the caller unmaps it. */
static int cache_put(struct sampzone *z, uintptr_t p, size_t len)
{
	if (len > SAMPZONE_CACHE_ONE || z->cache_n == SAMPZONE_CACHE_SLOTS ||
	    z->cache_bytes + len > z->cache_max)
		return 0;
	uint32_t pages = (uint32_t)(len / SAMPZONE_PAGE);
	size_t i = bisect_count_le(z->cache_n, pages, cache_key, z);
	size_t after = z->cache_n - i;
	memmove(&z->cache_pages[i + 1], &z->cache_pages[i], after * sizeof z->cache_pages[0]);
	memmove(&z->cache_ptr[i + 1], &z->cache_ptr[i], after * sizeof z->cache_ptr[0]);
	z->cache_pages[i] = pages;
	z->cache_ptr[i] = p;
	z->cache_n++;
	z->cache_bytes += len;
	return 1;
}

static void *alloc_large(struct sampzone *z, size_t n, int zero)
{
	size_t len = (n + SAMPZONE_PAGE - 1) & ~(size_t)(SAMPZONE_PAGE - 1);
	if (len < n || len > z->large_bytes || big_reserve(z) < 0)
		return NULL;
	uintptr_t got;
	size_t glen = cache_take(z, len, &got);
	if (glen) {
		big_put(z, got, glen);
		z->live++;
		z->cache_hits++;
		if (zero)
			memset((void *)got, 0, n);
		return (void *)got;
	}
	uintptr_t region = z->base + z->small_bytes;
	for (int tries = 0; tries < MAX_TRIES; tries++) {
		if (z->cursor + len > z->large_bytes)
			z->cursor = 0; /* wrap: NOREPLACE skips what is still live */
		uintptr_t hint = region + z->cursor;
		z->cursor += len;
		int r = map_at(z, hint, len);
		if (r < 0)
			return NULL;
		if (r > 0)
			continue;
		big_put(z, hint, len);
		z->mapped += len;
		z->live++;
		return (void *)hint;
	}
	return NULL;
}

void *sampzone_alloc(struct sampzone *z, size_t n, size_t align, int zero, int nested)
{
	if (align > SAMPZONE_PAGE || n == 0 || z->broken || lock(z, nested) != 0) {
		__atomic_fetch_add(&z->refused, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	void *p = NULL;
	if (!z->broken) {
		if (n <= SAMPZONE_SMALL_MAX && z->small_bytes)
			p = alloc_small(z, (uint32_t)((n + SAMPZONE_PAGE - 1) / SAMPZONE_PAGE), zero);
		else
			p = alloc_large(z, n, zero);
	}
	if (!p)
		z->refused++;
	lockrank_unlock(&z->lock);
	return p;
}

size_t sampzone_size(struct sampzone *z, const void *p, int nested)
{
	if (!sampzone_in_range(z, p) || ((uintptr_t)p & (SAMPZONE_PAGE - 1)))
		return 0;
	uintptr_t off = (uintptr_t)p - z->base;
	if (off < z->small_bytes) {
		const uint32_t *m = word_if_mapped(z, (uint32_t)(off / SAMPZONE_PAGE));
		if (!m)
			return 0;
		uint32_t w = __atomic_load_n(m, __ATOMIC_RELAXED);
		if (!(w & META_LIVE))
			return 0;
		return (size_t)((w >> META_LEN_SHIFT) & META_LEN_MASK) * SAMPZONE_PAGE;
	}
	if (lock(z, nested) != 0)
		return SIZE_MAX;
	long i = big_find(z, (uintptr_t)p);
	size_t len = i < 0 ? 0 : z->big[i].len;
	lockrank_unlock(&z->lock);
	return len;
}

int sampzone_release(struct sampzone *z, void *p, int nested)
{
	if (!sampzone_in_range(z, p) || ((uintptr_t)p & (SAMPZONE_PAGE - 1)))
		return 0;
	uintptr_t off = (uintptr_t)p - z->base;
	if (lock(z, nested) != 0) {
		__atomic_fetch_add(&z->leaked, 1, __ATOMIC_RELAXED);
		return -1;
	}
	if (off < z->small_bytes) {
		uint32_t pg = (uint32_t)(off / SAMPZONE_PAGE);
		const uint32_t *m = word_if_mapped(z, pg);
		uint32_t w = m ? *m : 0;
		if (!(w & META_LIVE)) {
			lockrank_unlock(&z->lock);
			return 0;
		}
		push_free(z, pg, (w >> META_LEN_SHIFT) & META_LEN_MASK);
		z->live--;
		lockrank_unlock(&z->lock);
		return 1;
	}
	long i = big_find(z, (uintptr_t)p);
	if (i < 0) {
		lockrank_unlock(&z->lock);
		return 0;
	}
	size_t len = z->big[i].len;
	big_del(z, (size_t)i);
	z->live--;
	if (cache_put(z, (uintptr_t)p, len)) {
		lockrank_unlock(&z->lock);
		return 1;
	}
	z->mapped -= len;
	lockrank_unlock(&z->lock);
	/* outside the lock: a NOREPLACE attempt meanwhile only skips the address */
	munmap(p, len);
	return 1;
}

void sampzone_destroy(struct sampzone *z)
{
	for (size_t i = 0; i < z->cache_n; i++)
		munmap((void *)z->cache_ptr[i], (size_t)z->cache_pages[i] * SAMPZONE_PAGE);
	z->cache_n = z->cache_bytes = 0;
	for (size_t i = 0; i < z->big_cap; i++)
		if (z->big[i].ptr)
			munmap((void *)z->big[i].ptr, z->big[i].len);
	pages_unmap(z->big, z->big_cap * sizeof *z->big);
	if (z->slab_next)
		munmap((void *)z->base, z->slab_next); /* skipped slots too: see sampzone.h */
	for (uint32_t i = 0; i < z->meta_chunks; i++)
		pages_unmap(z->meta_chunk[i], META_CHUNK_BYTES);
	if (z->slab_meta)
		pages_unmap(z->slab_meta, z->small_bytes / SAMPZONE_SLAB * sizeof(uint32_t *));
	z->big = NULL;
	z->slab_meta = NULL;
	z->meta_chunks = z->meta_chunk_used = 0;
	z->big_cap = z->big_n = 0;
	z->slab_next = 0;
}

void sampzone_fork_prepare(void)
{
	lockrank_lock(&sampzone_main.lock);
}

void sampzone_fork_release(void)
{
	lockrank_unlock(&sampzone_main.lock);
}
