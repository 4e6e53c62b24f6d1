/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_livetab.c - unit test of the live table and the sampled-pointer filter
 * (lib/livetab.c): insert/remove/replace, the capacity with its drop counter, deletion that
 * keeps every other entry findable (10^5 random pointers, half removed in random order),
 * the filter's promise (every live pointer hits; an emptied table hits nothing), the granule
 * word's (a live pointer is never ruled out; a lone sample's neighbours are), four
 * threads inserting and removing under one mutex, and the whole-filter mode of stats_exact.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../../lib/livetab.h"
#include "check.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static struct live_entry entry(uintptr_t p, uint32_t stack)
{
	struct live_entry e;
	memset(&e, 0, sizeof e);
	e.ptr = p;
	e.size = 100;
	e.stack = stack;
	return e;
}

#define N 100000
static uintptr_t ptrs[N];

static struct livetab shared;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	uintptr_t base = 0x10000000ull * (uintptr_t)(1 + (intptr_t)arg);
	struct live_entry old;
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < 1000; i++) {
			struct live_entry e = entry(base + (uintptr_t)i * 48, (uint32_t)(intptr_t)arg);
			pthread_mutex_lock(&lock);
			livetab_insert(&shared, &e, &old);
			pthread_mutex_unlock(&lock);
		}
		for (int i = 0; i < 1000; i += (round & 1) + 1) {
			pthread_mutex_lock(&lock);
			livetab_remove(&shared, base + (uintptr_t)i * 48, &old);
			pthread_mutex_unlock(&lock);
		}
	}
	return NULL;
}

int main(void)
{
	struct livetab t;
	struct live_entry e, old, out;
	CHECK(livetab_init(&t, 3) == 0);
	e = entry(0x1000, 1);
	CHECK(!livetab_filter_hit((void *)0x1000));
	CHECK(livetab_insert(&t, &e, &old) == 0);
	CHECK(livetab_filter_hit((void *)0x1000));
	/* same pointer again: replaced, old returned */
	e = entry(0x1000, 2);
	CHECK(livetab_insert(&t, &e, &old) == 1 && old.stack == 1);
	CHECK(t.n == 1);
	e = entry(0x2000, 3);
	CHECK(livetab_insert(&t, &e, &old) == 0);
	e = entry(0x3000, 4);
	CHECK(livetab_insert(&t, &e, &old) == 0);
	e = entry(0x4000, 5);
	CHECK(livetab_insert(&t, &e, &old) == -1 && t.dropped_full == 1);
	CHECK(livetab_remove(&t, 0x1000, &out) == 1 && out.stack == 2);
	CHECK(livetab_remove(&t, 0x1000, &out) == 0);
	CHECK(!livetab_filter_hit((void *)0x1000));
	CHECK(livetab_insert(&t, &e, &old) == 0 && t.n == 3);
	CHECK(livetab_remove(&t, 0x5000, &out) == 0);
	livetab_clear(&t);
	CHECK(t.n == 0 && !livetab_filter_hit((void *)0x2000));
	CHECK(livetab_remove(&t, 0x2000, &out) == 0);
	livetab_release(&t);

	/* the granule word: a lone sample's neighbours are ruled out without the lock, the sample
	   never; two samples in a granule, or one left of two, rule nothing out */
	CHECK(livetab_init(&t, 100) == 0);
	e = entry(0x7000010, 1);
	CHECK(livetab_insert(&t, &e, &old) == 0);
	CHECK(livetab_may_hold((void *)0x7000010), "the sample itself ruled out");
	CHECK(!livetab_may_hold((void *)0x7000020) && !livetab_may_hold((void *)0x7000000) &&
	      !livetab_may_hold((void *)0x7000ff0), "a neighbour not ruled out");
	CHECK(livetab_may_hold((void *)0x7000010 + (1ull << 32)), "an alias 4 GiB away ruled out");
	e = entry(0x7000800, 2);
	CHECK(livetab_insert(&t, &e, &old) == 0);
	CHECK(livetab_may_hold((void *)0x7000010) && livetab_may_hold((void *)0x7000800) &&
	      livetab_may_hold((void *)0x7000020), "two samples: all must look");
	CHECK(livetab_remove(&t, 0x7000800, &out) == 1);
	CHECK(livetab_may_hold((void *)0x7000010) && livetab_may_hold((void *)0x7000020),
	      "one left of two: which one is not known");
	CHECK(livetab_remove(&t, 0x7000010, &out) == 1 && !livetab_filter_hit((void *)0x7000010));
	e = entry(0x7000020, 3);
	CHECK(livetab_insert(&t, &e, &old) == 0 && !livetab_may_hold((void *)0x7000010) &&
	      livetab_may_hold((void *)0x7000020), "a granule emptied and reused");
	/* a granule saturates at LIVETAB_GRAN_MAX blocks and stays hit until cleared */
	for (unsigned i = 0; i < LIVETAB_GRAN_MAX + 3; i++) {
		e = entry(0x9000000 + 16 * (uintptr_t)i, 4);
		CHECK(livetab_insert(&t, &e, &old) == 0);
	}
	for (unsigned i = 0; i < LIVETAB_GRAN_MAX + 3; i++)
		CHECK(livetab_remove(&t, 0x9000000 + 16 * (uintptr_t)i, &out) == 1);
	CHECK(livetab_may_hold((void *)0x9000ff0) && livetab_filter_hit((void *)0x9000ff0),
	      "a saturated granule let go");
	livetab_clear(&t);
	CHECK(!livetab_filter_hit((void *)0x9000000) && !livetab_filter_hit((void *)0x7000020) &&
	      livetab_gran[livetab_filter_index((void *)0x9000000)] == 0, "clear left a word");
	livetab_release(&t);

	/* many pointers, random removal order */
	CHECK(livetab_init(&t, N) == 0);
	for (int i = 0; i < N; i++) {
		ptrs[i] = (uintptr_t)(next() & 0x7ffffffffff0ull) | 0x10;
		e = entry(ptrs[i], (uint32_t)i);
		int r = livetab_insert(&t, &e, &old);
		CHECK(r == 0 || r == 1);
	}
	int ruled_out = 0, lone = 0;
	for (int i = 0; i < N; i++) {
		CHECK(livetab_filter_hit((void *)ptrs[i]) && livetab_may_hold((void *)ptrs[i]));
		/* the block 32 bytes on, in the same granule, was (almost surely) not inserted */
		uintptr_t nb = ptrs[i] ^ 0x20;
		lone += livetab_gran[livetab_filter_index((void *)nb)] >> LIVETAB_GRAN_COUNT_SHIFT == 1;
		ruled_out += !livetab_may_hold((void *)nb);
	}
	/* 10^5 samples over 2^20 granules: most granules hold one; each such neighbour ruled out */
	CHECK(lone > N * 8 / 10 && ruled_out == lone, "lone %d, ruled out %d", lone, ruled_out);
	for (int i = N - 1; i > 0; i--) { /* shuffle */
		int j = (int)(next() % (uint64_t)(i + 1));
		uintptr_t tmp = ptrs[i];
		ptrs[i] = ptrs[j];
		ptrs[j] = tmp;
	}
	for (int i = 0; i < N / 2; i++)
		CHECK(livetab_remove(&t, ptrs[i], &out) == 1 && out.ptr == ptrs[i]);
	int found = 0, gone = 0;
	for (int i = 0; i < N; i++) {
		if (livetab_remove(&t, ptrs[i], &out) == 1) {
			found++;
			CHECK(i >= N / 2);
		} else {
			gone++;
		}
	}
	CHECK(found == N - N / 2 && gone == N / 2 && t.n == 0);
	/* the filter is empty again: no pointer hits */
	int hits = 0;
	for (int i = 0; i < N; i++)
		hits += livetab_filter_hit((void *)ptrs[i]);
	CHECK(hits == 0);
	livetab_release(&t);

	/* threads under one lock */
	CHECK(livetab_init(&shared, 1 << 16) == 0);
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	/* last round (19, odd) removed every other pointer: 500 left per thread */
	CHECK(shared.n == 2000);
	uint64_t counted = 0;
	for (int k = 0; k < 4; k++) {
		uintptr_t base = 0x10000000ull * (uintptr_t)(1 + k);
		for (int i = 0; i < 1000; i++) {
			int live = livetab_filter_hit((void *)(base + (uintptr_t)i * 48));
			if (i & 1) /* still inserted */
				CHECK(live && livetab_may_hold((void *)(base + (uintptr_t)i * 48)));
			if (livetab_remove(&shared, base + (uintptr_t)i * 48, &out)) {
				counted++;
				CHECK((i & 1) && out.stack == (uint32_t)k);
			}
		}
	}
	CHECK(counted == 2000 && shared.n == 0);
	livetab_release(&shared);

	/* whole-filter mode (stats_exact): every pointer hits, and keeps hitting through an
	   insert and remove in its granule and a clear */
	struct livetab all;
	CHECK(livetab_init(&all, 16) == 0);
	livetab_filter_pin_all();
	CHECK(livetab_filter_hit((void *)0x123456789a0ull) && livetab_filter_hit((void *)0x7fff0000ull));
	struct live_entry one;
	memset(&one, 0, sizeof one);
	one.ptr = 0x55550000;
	CHECK(livetab_insert(&all, &one, &out) == 0 && livetab_remove(&all, one.ptr, &out) == 1);
	CHECK(livetab_filter_hit((void *)one.ptr), "pinned bit cleared by a remove");
	livetab_clear(&all);
	CHECK(livetab_filter_hit((void *)one.ptr) && livetab_filter_hit((void *)0x10),
	      "pinned bits cleared by livetab_clear");
	livetab_release(&all);

	/* no budget: grows to 3 M entries, one bucket at a time */
	CHECK(livetab_init(&t, 0) == 0);
	size_t empty = livetab_bytes(&t);
	enum { BIG_N = 3000000 };
	for (uint64_t i = 0; i < BIG_N; i++) {
		e = entry(0x100000000ull + i * 32, (uint32_t)(i % 1000));
		e.size = 1 + i % 97;
		CHECK(livetab_insert(&t, &e, &old) == 0);
	}
	CHECK(t.n == BIG_N && t.dropped_full == 0 && t.dropped_nomem == 0);
	double per = (double)(livetab_bytes(&t) - empty) / BIG_N;
	printf("lib_livetab: %.1f bytes mapped per entry at %d entries, %llu buckets, longest split "
	       "chain %llu\n", per, BIG_N, (unsigned long long)t.index.nbuckets,
	       (unsigned long long)t.max_chain);
	CHECK(per <= 28.0, "%.1f bytes per entry", per);
	CHECK(t.max_chain <= 64, "a split walked %llu records", (unsigned long long)t.max_chain);
	int bad = 0;
	for (uint64_t i = 0; i < BIG_N; i += 3) {
		bad += livetab_remove(&t, 0x100000000ull + i * 32, &out) != 1 || out.size != 1 + i % 97 ||
		       out.stack != (uint32_t)(i % 1000);
	}
	CHECK(bad == 0, "%d entries lost or changed", bad);
	/* sizes that do not fit 32 bits come back exactly */
	e = entry(0x7770000, 9);
	e.size = (5ull << 32) + 3;
	CHECK(livetab_insert(&t, &e, &old) == 0);
	e.size = 7;
	e.ptr = 0x7770040;
	CHECK(livetab_insert(&t, &e, &old) == 0);
	CHECK(livetab_remove(&t, 0x7770000, &out) == 1 && out.size == (5ull << 32) + 3);
	CHECK(livetab_remove(&t, 0x7770040, &out) == 1 && out.size == 7);
	livetab_clear(&t);
	CHECK(t.n == 0 && livetab_bytes(&t) <= empty + 4096, "clear kept %zu bytes",
	      livetab_bytes(&t) - empty);
	CHECK(livetab_remove(&t, 0x100000000ull + 32, &out) == 0);
	livetab_release(&t);

	if (failures)
		fprintf(stderr, "lib_livetab: %d failure(s)\n", failures);
	else
		printf("lib_livetab: ok\n");
	return failures != 0;
}
