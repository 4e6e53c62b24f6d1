/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_stacktab.c - unit test of the stack table (lib/stacktab.c): interning returns one id
 * per distinct PC vector, a budget is a hard limit with a drop counter, clear forgets
 * everything, no budget keeps 200,000 stacks of any depth, recycling keeps the table small
 * through 10^6 churned stacks (and frees nothing while a dump holds it), and four threads interning overlapping stacks under one mutex
 * (as the collector's table lock does) end with exactly the distinct set.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../../lib/stacktab.h"
#include "check.h"

static struct stacktab shared;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t ids[4][2000];

static void make_stack(uintptr_t *pcs, uint32_t *depth, int k)
{
	*depth = 1 + (uint32_t)(k % 7);
	for (uint32_t i = 0; i < *depth; i++)
		pcs[i] = 0x400000 + (uintptr_t)k * 64 + i;
}

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	for (int i = 0; i < 2000; i++) {
		int k = (i * 7 + t * 500) % 3000; /* overlapping ranges */
		uintptr_t pcs[8];
		uint32_t d;
		make_stack(pcs, &d, k);
		pthread_mutex_lock(&lock);
		int64_t id = stacktab_intern(&shared, pcs, d);
		if (id >= 0) {
			struct stack_entry *e = stacktab_get(&shared, (uint32_t)id);
			e->live_samples++;
		}
		pthread_mutex_unlock(&lock);
		ids[t][i] = id;
	}
	return NULL;
}

int main(void)
{
	struct stacktab t;
	CHECK(stacktab_init(&t, 4, 8) == 0);
	uintptr_t a[] = {1, 2, 3}, b[] = {1, 2, 4}, c[] = {1, 2}, d[] = {9}, e[] = {10};
	int64_t ia = stacktab_intern(&t, a, 3);
	CHECK(ia == 0);
	CHECK(stacktab_intern(&t, a, 3) == ia);
	int64_t ib = stacktab_intern(&t, b, 3);
	int64_t ic = stacktab_intern(&t, c, 2); /* a prefix is a different stack */
	CHECK(ib == 1 && ic == 2);
	CHECK(memcmp(stacktab_pcs(&t, stacktab_get(&t, 1)), b, sizeof b) == 0);
	CHECK(stacktab_get(&t, (uint32_t)ic)->depth == 2);
	CHECK(stacktab_intern(&t, d, 1) == 3);
	/* full: new stacks are dropped and counted, known ones still found */
	CHECK(stacktab_intern(&t, e, 1) == -1);
	CHECK(t.dropped_full == 1);
	CHECK(stacktab_intern(&t, b, 3) == ib);
	CHECK(stacktab_count(&t) == 4);

	/* clear: everything forgotten, storage reusable, counters kept */
	stacktab_get(&t, 0)->live_objs_fp = 123;
	stacktab_clear(&t);
	CHECK(stacktab_count(&t) == 0);
	CHECK(stacktab_intern(&t, e, 1) == 0);
	CHECK(stacktab_get(&t, 0)->live_objs_fp == 0);
	CHECK(t.dropped_full == 1);
	stacktab_release(&t);

	/* no budget and deep stacks: 200,000 stacks of 1..256 frames all kept (the PC storage
	   assumes no average depth) and found again */
	CHECK(stacktab_init(&t, 0, 256) == 0);
	static uintptr_t deep[256];
	int ok = 0;
	for (int k = 0; k < 200000; k++) {
		uint32_t dep = 1 + (uint32_t)(k % 256);
		for (uint32_t i = 0; i < dep; i++)
			deep[i] = (uintptr_t)k * 1000 + i + 1;
		ok += stacktab_intern(&t, deep, dep) == k;
	}
	CHECK(ok == 200000 && t.dropped_full == 0 && t.dropped_nomem == 0, "ok %d", ok);
	int again = 0;
	for (int k = 0; k < 200000; k += 7) {
		uint32_t dep = 1 + (uint32_t)(k % 256);
		for (uint32_t i = 0; i < dep; i++)
			deep[i] = (uintptr_t)k * 1000 + i + 1;
		again += stacktab_intern(&t, deep, dep) == k &&
		         stacktab_pcs(&t, stacktab_get(&t, (uint32_t)k))[dep - 1] == deep[dep - 1];
	}
	CHECK(again == (200000 + 6) / 7, "found again %d", again);
	stacktab_release(&t);

	/* recycling: 10^6 distinct stacks, each sampled once and left empty, then a new one: the
	   table stays small and the new stack is found; a queued stack sampled again is kept */
	CHECK(stacktab_init(&t, 0, 8) == 0);
	t.recycle = 1;
	uintptr_t keep[2] = {0xabc, 0xdef};
	int64_t kept = stacktab_intern(&t, keep, 2);
	CHECK(kept >= 0);
	stacktab_get(&t, (uint32_t)kept)->live_samples = 1;
	for (int k = 0; k < 1000000; k++) {
		uintptr_t pcs[3] = {(uintptr_t)k + 1, 0x5000, 0x6000};
		int64_t id = stacktab_intern(&t, pcs, 3);
		CHECK(id >= 0);
		if (id >= 0) {
			struct stack_entry *se = stacktab_get(&t, (uint32_t)id);
			se->alloc_objs_fp += 1; /* one allocation of 10 bytes: summed when recycled */
			se->alloc_bytes_fp += 10;
			stacktab_unused(&t, (uint32_t)id); /* its one sample is gone */
		}
	}
	/* delta.c reads what recycled stacks had allocated: every one is counted */
	CHECK(t.recycled_objs_fp == t.recycled && t.recycled_bytes_fp == 10 * t.recycled,
	      "recycled %llu stacks, %llu objs, %llu bytes", (unsigned long long)t.recycled,
	      (unsigned long long)t.recycled_objs_fp, (unsigned long long)t.recycled_bytes_fp);
	printf("lib_stacktab: after 10^6 churned stacks: %llu held, %llu recycled, %zu bytes\n",
	       (unsigned long long)stacktab_count(&t), (unsigned long long)t.recycled,
	       stacktab_bytes(&t));
	CHECK(stacktab_count(&t) <= 2100 && t.recycled >= 1000000 - 2100);
	CHECK(stacktab_bytes(&t) < (2u << 20), "%zu bytes", stacktab_bytes(&t));
	uintptr_t leak[2] = {0x1eac, 0x1};
	int64_t lid = stacktab_intern(&t, leak, 2);
	CHECK(lid >= 0 && stacktab_intern(&t, keep, 2) == kept);
	/* a held table frees nothing */
	stacktab_hold(&t, +1);
	uint64_t before = t.recycled;
	for (int k = 0; k < 5000; k++) {
		uintptr_t pcs[1] = {(uintptr_t)k + 0x900000};
		int64_t id = stacktab_intern(&t, pcs, 1);
		if (id >= 0)
			stacktab_unused(&t, (uint32_t)id);
	}
	CHECK(t.recycled == before, "recycled while held");
	stacktab_hold(&t, -1);
	stacktab_release(&t);

	/* hash: equal vectors equal hashes, order matters */
	uintptr_t x[] = {5, 6}, y[] = {6, 5};
	CHECK(stacktab_hash(x, 2) == stacktab_hash(x, 2));
	CHECK(stacktab_hash(x, 2) != stacktab_hash(y, 2));

	/* many threads: 3000 distinct stacks exist in the union of their ranges */
	CHECK(stacktab_init(&shared, 10000, 8) == 0);
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	char seen[3000];
	memset(seen, 0, sizeof seen);
	int distinct = 0;
	for (int t2 = 0; t2 < 4; t2++)
		for (int i = 0; i < 2000; i++) {
			int k = (i * 7 + t2 * 500) % 3000;
			if (!seen[k]) {
				seen[k] = 1;
				distinct++;
			}
		}
	CHECK(stacktab_count(&shared) == (uint64_t)distinct);
	uint64_t total = 0;
	for (uint32_t i = 0; i < stacktab_id_end(&shared); i++)
		total += stacktab_get(&shared, i)->live_samples;
	CHECK(total == 8000);
	/* the same k always got the same id, whichever thread interned it */
	for (int i = 0; i < 2000; i++)
		for (int t2 = 1; t2 < 4; t2++)
			for (int j = 0; j < 2000; j++)
				if ((j * 7 + t2 * 500) % 3000 == (i * 7) % 3000)
					CHECK(ids[t2][j] == ids[0][i]);
	stacktab_release(&shared);

	if (failures)
		fprintf(stderr, "lib_stacktab: %d failure(s)\n", failures);
	else
		printf("lib_stacktab: ok\n");
	return failures != 0;
}
