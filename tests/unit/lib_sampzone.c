/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_sampzone.c - unit test of the sampled-object zone (lib/sampzone.c) on small zones of
 * its own: page runs of 1-4 pages handed out, released and reused (LIFO per length, zeroed
 * on request), the slab region running out, large blocks mapped and unmapped, the large
 * region's cursor wrapping past a live block, pointers the zone did not hand out (inside a
 * run, a run never handed out, a double release, the host's own mapping inside the range),
 * the index growing to thousands of small and large blocks, the nested (trylock) variants
 * and four threads sharing one zone without overlapping blocks, and the slab index mapped in
 * proportion to the slabs in use (none before the first block, a second chunk of index words
 * at the 33rd slab). Not a test of core.c's use.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../lib/sampzone.h"
#include "check.h"

#define MIB ((size_t)1 << 20)

static int mapped(const void *p)
{
	unsigned char v;
	return mincore((void *)((uintptr_t)p & ~(uintptr_t)4095), 4096, &v) == 0;
}

static int all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static void test_small(uintptr_t base)
{
	struct sampzone z;
	sampzone_init(&z, base, 8 * MIB, 64 * MIB);
	unsigned char *a = sampzone_alloc(&z, 1, 0, 0, 0);
	CHECK(a && (uintptr_t)a == base, "the first run starts the first slab");
	CHECK(sampzone_size(&z, a, 0) == 4096);
	unsigned char *b = sampzone_alloc(&z, SAMPZONE_SMALL_MAX, 4096, 0, 0);
	CHECK(b == a + 4096 && sampzone_size(&z, b, 0) == 4 * 4096, "a 16 KiB block: 4 pages");
	unsigned char *c = sampzone_alloc(&z, 4097, 0, 0, 0);
	CHECK(c == b + 4 * 4096 && sampzone_size(&z, c, 0) == 2 * 4096);
	CHECK(z.live == 3 && z.mapped == SAMPZONE_SLAB);
	memset(b, 0xab, 4 * 4096);
	CHECK(sampzone_release(&z, b, 0) == 1);
	CHECK(sampzone_size(&z, b, 0) == 0, "a released run is unknown");
	CHECK(sampzone_release(&z, b, 0) == 0, "a double release is refused");
	unsigned char *d = sampzone_alloc(&z, 9000, 0, 0, 0);
	CHECK(d == c + 2 * 4096, "a 3-page run does not take the free 4-page one");
	unsigned char *e = sampzone_alloc(&z, 16000, 0, 1, 0);
	CHECK(e == b, "the free 4-page run is reused");
	CHECK(e && all_zero(e, 16384), "a reused run handed out zeroed when asked");
	memset(e, 0x5a, 16384);
	CHECK(sampzone_release(&z, e, 0) == 1);
	unsigned char *h = sampzone_alloc(&z, 13000, 0, 0, 0);
	CHECK(h == b && h[0] == 0x5a, "not zeroed unless asked (the zone's memory)");
	/* pointers the zone did not hand out */
	CHECK(sampzone_release(&z, a + 16, 0) == 0, "inside a run");
	CHECK(sampzone_size(&z, a + 16, 0) == 0);
	CHECK(sampzone_release(&z, (void *)(base + SAMPZONE_SLAB - 4096), 0) == 0, "never handed out");
	CHECK(sampzone_release(&z, (void *)(base - 4096), 0) == 0, "below the range");
	CHECK(sampzone_size(&z, (void *)(base + 200 * MIB), 0) == 0, "above the range");
	CHECK(sampzone_alloc(&z, 100, 8192, 0, 0) == NULL && z.refused == 1, "alignment above a page");
	/* the slab region runs out: 4 slabs of 2 MiB */
	int n4 = 0;
	while (sampzone_alloc(&z, 16384, 0, 0, 0))
		n4++;
	CHECK(z.mapped == 8 * MIB, "all four slabs mapped");
	/* 10 pages of the first slab in use (runs of 1, 2, 3, 4): its tail of 2 pages stays */
	CHECK(n4 == (512 - 10) / 4 + 3 * 128, "4-page runs until the region is full (%d)", n4);
	CHECK(z.refused == 2);
	sampzone_destroy(&z);
}

static void test_large(uintptr_t base)
{
	struct sampzone z;
	sampzone_init(&z, base, 8 * MIB, 64 * MIB);
	uintptr_t region = base + 8 * MIB;
	unsigned char *p = sampzone_alloc(&z, MIB + 1, 0, 0, 0);
	CHECK((uintptr_t)p == region, "the first large block starts the region");
	CHECK(sampzone_size(&z, p, 0) == MIB + 4096);
	memset(p, 7, MIB + 1);
	CHECK(z.live == 1 && z.mapped == MIB + 4096);
	CHECK(sampzone_release(&z, p, 0) == 1);
	/* kept for reuse: the next block of a similar size gets the same pages, zeroed on request */
	CHECK(mapped(p) && z.live == 0 && z.cache_n == 1 && z.cache_bytes == MIB + 4096,
	      "a released large block is cached");
	CHECK(sampzone_release(&z, p, 0) == 0, "a cached block is not live");
	CHECK(sampzone_alloc(&z, 4 * MIB, 0, 0, 0) != p, "too large for the cached mapping");
	CHECK(z.cache_n == 1);
	sampzone_release(&z, (void *)(region + MIB + 4096), 0);
	CHECK(z.cache_n == 2);
	unsigned char *q = sampzone_alloc(&z, MIB - 5000, 0, 1, 0);
	CHECK(q == p && z.cache_hits == 1 && q[0] == 0 && q[MIB - 5001] == 0,
	      "reused with its pages, zeroed");
	CHECK(sampzone_release(&z, q, 0) == 1);
	/* without room in the cache a released block is unmapped */
	sampzone_destroy(&z);
	sampzone_init(&z, base, 8 * MIB, 64 * MIB);
	z.cache_max = 0;
	p = sampzone_alloc(&z, MIB + 1, 0, 0, 0);
	CHECK((uintptr_t)p == region);
	CHECK(sampzone_release(&z, p, 0) == 1);
	CHECK(!mapped(p), "a released large block is unmapped");
	CHECK(z.live == 0 && z.mapped == 0);
	CHECK(sampzone_release(&z, p, 0) == 0);
	/* wrap: ten 5 MiB blocks from the cursor (1 MiB + 4 KiB); keep the one at 6 MiB + 4 KiB */
	void *v[10];
	for (int i = 0; i < 10; i++) {
		v[i] = sampzone_alloc(&z, 5 * MIB, 0, 0, 0);
		CHECK((uintptr_t)v[i] == region + MIB + 4096 + (size_t)i * 5 * MIB, "block %d", i);
	}
	for (int i = 0; i < 10; i++)
		if (i != 1)
			CHECK(sampzone_release(&z, v[i], 0) == 1);
	/* the cursor is at 51 MiB + 4 KiB: 20 MiB wraps to 0, which overlaps the live block:
	   NOREPLACE refuses, the next try at 20 MiB succeeds */
	void *w = sampzone_alloc(&z, 20 * MIB, 0, 0, 0);
	CHECK((uintptr_t)w == region + 20 * MIB, "wrapped past the live block: %#lx",
	      (unsigned long)((uintptr_t)w - region));
	CHECK(*(unsigned char *)v[1] == 0 && mapped(v[1]), "the live block untouched");
	CHECK(sampzone_release(&z, v[1], 0) == 1 && sampzone_release(&z, w, 0) == 1);
	CHECK(sampzone_alloc(&z, 65 * MIB, 0, 0, 0) == NULL, "larger than the region");
	/* the host's own mapping in the range is not the zone's */
	void *host = mmap((void *)(region + 40 * MIB), 4096, PROT_READ | PROT_WRITE,
	                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	CHECK(host == (void *)(region + 40 * MIB));
	CHECK(sampzone_size(&z, host, 0) == 0 && sampzone_release(&z, host, 0) == 0);
	CHECK(mapped(host), "left alone");
	munmap(host, 4096);
	sampzone_destroy(&z);
}

/* thousands of blocks: the slab index and the large table (grown from 256 slots) */
static void test_many(uintptr_t base)
{
	struct sampzone z;
	sampzone_init(&z, base, 32 * MIB, 512 * MIB);
	enum { N = 5000, S = 3000 };
	static void *big[N], *small[S];
	for (int i = 0; i < N; i++) {
		big[i] = sampzone_alloc(&z, 20000 + (size_t)(i % 7) * 4096, 0, 0, 0);
		if (!big[i]) {
			CHECK(0, "large block %d", i);
			break;
		}
		if (big[i])
			*(int *)big[i] = i;
	}
	for (int i = 0; i < S; i++) {
		small[i] = sampzone_alloc(&z, 1 + (size_t)(i % 4) * 4096, 0, 0, 0);
		if (!small[i]) {
			CHECK(0, "small block %d", i);
			break;
		}
		if (small[i])
			*(int *)small[i] = -i;
	}
	CHECK(z.big_n == N && z.big_cap >= 2 * N, "the large table grew: %zu slots", z.big_cap);
	CHECK(z.live == N + S);
	/* release every other one, in a scrambled order; the rest stay findable */
	for (int k = 0; k < N; k++) {
		int i = (int)(((uint64_t)k * 2654435761u) % N);
		if (i % 2 == 0 && big[i]) {
			CHECK(sampzone_release(&z, big[i], 0) == 1);
			big[i] = NULL;
		}
	}
	int bad = 0;
	for (int i = 0; i < N; i++)
		if (big[i] && (sampzone_size(&z, big[i], 0) != 20480 + (size_t)(i % 7) * 4096 ||
		               *(int *)big[i] != i))
			bad++;
	CHECK(bad == 0, "%d large blocks lost after deletions", bad);
	for (int i = 0; i < S; i++)
		if (small[i])
			CHECK(sampzone_size(&z, small[i], 0) == (size_t)(1 + i % 4) * 4096 &&
			      *(int *)small[i] == -i);
	for (int i = 0; i < N; i++)
		if (big[i])
			CHECK(sampzone_release(&z, big[i], 0) == 1);
	for (int i = 0; i < S; i++)
		if (small[i])
			CHECK(sampzone_release(&z, small[i], 0) == 1);
	CHECK(z.big_n == 0 && z.live == 0);
	sampzone_destroy(&z);
}

static struct sampzone shared;
static int overlap;

static void *worker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	uint64_t s = id * 7919 + 1;
	void *mine[32] = {0};
	size_t len[32] = {0};
	for (int r = 0; r < 20000; r++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		int k = (int)(s >> 59);
		if (mine[k]) {
			unsigned char *q = mine[k];
			if (q[0] != id || q[len[k] - 1] != id)
				__atomic_fetch_add(&overlap, 1, __ATOMIC_RELAXED);
			sampzone_release(&shared, mine[k], 0);
			mine[k] = NULL;
		} else {
			len[k] = (s >> 20) % 3 ? 1 + (s >> 32) % 16384 : 20000 + (s >> 32) % 100000;
			mine[k] = sampzone_alloc(&shared, len[k], 0, 0, 0);
			if (mine[k]) {
				((unsigned char *)mine[k])[0] = (unsigned char)id;
				((unsigned char *)mine[k])[len[k] - 1] = (unsigned char)id;
			}
		}
	}
	for (int k = 0; k < 32; k++)
		if (mine[k])
			sampzone_release(&shared, mine[k], 0);
	return NULL;
}

static int held; /* 1 while holder() has the lock; main sets 2 to let it go */

static void *holder(void *arg)
{
	(void)arg;
	lockrank_lock(&shared.lock);
	__atomic_store_n(&held, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&held, __ATOMIC_ACQUIRE) != 2)
		sched_yield();
	lockrank_unlock(&shared.lock);
	return NULL;
}

static void test_threads(uintptr_t base)
{
	sampzone_init(&shared, base, 32 * MIB, 256 * MIB);
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CHECK(overlap == 0, "%d blocks overwritten by another thread's", overlap);
	CHECK(shared.live == 0 && shared.big_n == 0);
	CHECK(shared.refused == 0, "%lu refused", (unsigned long)shared.refused);
	/* nested: the lock busy (held by another thread) makes the trylock variants give up */
	void *p = sampzone_alloc(&shared, 100000, 0, 0, 0);
	void *q = sampzone_alloc(&shared, 100, 0, 0, 0);
	pthread_t h;
	pthread_create(&h, NULL, holder, NULL);
	while (!__atomic_load_n(&held, __ATOMIC_ACQUIRE))
		sched_yield();
	CHECK(sampzone_alloc(&shared, 100, 0, 0, 1) == NULL);
	CHECK(sampzone_release(&shared, p, 1) == -1 && shared.leaked == 1);
	CHECK(sampzone_size(&shared, p, 1) == SIZE_MAX, "a large block's size needs the lock");
	CHECK(sampzone_size(&shared, q, 1) == 4096, "a small block's does not");
	__atomic_store_n(&held, 2, __ATOMIC_RELEASE);
	pthread_join(h, NULL);
	CHECK(sampzone_release(&shared, p, 1) == 1 && sampzone_release(&shared, q, 1) == 1);
	sampzone_destroy(&shared);
}

/* The mapping cache serves the best fit whatever order blocks were released in: 40 blocks of
   5..44 pages released shuffled, then requests of every size get the smallest cached mapping
   that holds them (within 1.5x), and the cache stays ordered. */
static void test_cache_fit(uintptr_t base)
{
	struct sampzone z;
	sampzone_init(&z, base, 8 * MIB, 64 * MIB);
	enum { N = 40 };
	uintptr_t blk[N];
	for (int i = 0; i < N; i++) {
		blk[i] = (uintptr_t)sampzone_alloc(&z, (size_t)(5 + i) * 4096, 0, 0, 0);
		CHECK(blk[i] != 0);
	}
	/* release in the order 7, 14, 21, ... (mod 40: 7 is prime to it) */
	for (int k = 0; k < N; k++) {
		int i = (k * 7) % N;
		CHECK(sampzone_release(&z, (void *)blk[i], 0) == 1);
	}
	CHECK(z.cache_n == N, "all %d cached (%zu)", N, z.cache_n);
	for (size_t i = 1; i < z.cache_n; i++)
		CHECK(z.cache_pages[i - 1] <= z.cache_pages[i], "cache ordered at %zu", i);
	/* 45 pages: no cached mapping holds it (the largest is 44): a new mapping */
	void *p = sampzone_alloc(&z, 45 * 4096, 0, 0, 0);
	CHECK(p && z.cache_hits == 0 && z.cache_n == N, "nothing cached is large enough");
	/* 20 pages: exactly the block of 20 (index 15) */
	CHECK((uintptr_t)sampzone_alloc(&z, 20 * 4096 - 100, 0, 0, 0) == blk[15], "best fit 20");
	/* 20 again: the 21-page block is the best left */
	CHECK((uintptr_t)sampzone_alloc(&z, 20 * 4096, 0, 0, 0) == blk[16], "next best 21");
	/* 4 pages is a small block, not the cache's; 5 pages takes the 5-page block */
	CHECK((uintptr_t)sampzone_alloc(&z, 5 * 4096, 0, 0, 0) == blk[0], "best fit 5");
	CHECK(z.cache_hits == 3 && z.cache_n == N - 3);
	for (size_t i = 1; i < z.cache_n; i++)
		CHECK(z.cache_pages[i - 1] <= z.cache_pages[i], "cache still ordered at %zu", i);
	sampzone_destroy(&z);
}

/* The slab region's index costs address space as slabs are mapped, not for the whole region
   at the first block (4 MiB of it in the full zone, before). */
static void test_index_growth(uintptr_t base)
{
	struct sampzone z;
	sampzone_init(&z, base, 128 * MIB, 64 * MIB);
	const size_t dir = 64 * sizeof(uint32_t *);
	const size_t chunk = (size_t)SAMPZONE_META_CHUNK_SLABS * SAMPZONE_SLAB_PAGES * 4;
	CHECK(z.index_bytes == 0, "nothing mapped before the first block");
	enum { PER_SLAB = 128, N = 33 * PER_SLAB };
	static unsigned char *b[N];
	for (int i = 0; i < N; i++) {
		b[i] = sampzone_alloc(&z, SAMPZONE_SMALL_MAX, 0, 0, 0);
		if (!b[i]) {
			CHECK(0, "block %d", i);
			return;
		}
		b[i][0] = (unsigned char)i;
		if (i == 0)
			CHECK(z.index_bytes == dir + chunk, "one slab: %lu", (unsigned long)z.index_bytes);
	}
	CHECK(z.mapped == 33 * SAMPZONE_SLAB);
	CHECK(z.index_bytes == dir + 2 * chunk, "33 slabs, two chunks: %lu",
	      (unsigned long)z.index_bytes);
	int known = 0;
	for (int i = 0; i < N; i++)
		known += sampzone_size(&z, b[i], 0) == SAMPZONE_SMALL_MAX && b[i][0] == (unsigned char)i;
	CHECK(known == N, "every block found in its slab's words (%d)", known);
	CHECK(sampzone_release(&z, b[N - 1], 0) == 1 && sampzone_release(&z, b[5], 0) == 1);
	CHECK(sampzone_alloc(&z, 16000, 0, 0, 0) == b[5], "LIFO reuse across chunks");
	CHECK(sampzone_alloc(&z, 16000, 0, 0, 0) == b[N - 1]);
	sampzone_destroy(&z);
}

int main(void)
{
	uintptr_t base = sampzone_pick_base();
	CHECK(base >= ((uintptr_t)16 << 40) && base < ((uintptr_t)64 << 40) &&
	      base % ((uintptr_t)1 << 40) == 0, "%#lx", (unsigned long)base);
	CHECK(SAMPZONE_OFF + SAMPZONE_SIZE == 0 && (uintptr_t)0 - SAMPZONE_OFF >= SAMPZONE_SIZE,
	      "NULL is not in the empty zone's range");
	test_small(base);
	test_large(base + ((uintptr_t)1 << 30));
	test_cache_fit(base + ((uintptr_t)3 << 30));
	test_many(base + ((uintptr_t)2 << 30));
	test_threads(base + ((uintptr_t)4 << 30));
	test_index_growth(base + ((uintptr_t)6 << 30));
	return check_finish("lib_sampzone");
}
