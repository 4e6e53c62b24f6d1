/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * livetab.c - the live table and sampled-pointer filter of livetab.h: chains of packed
 * records in a linear-hashing table, one bucket split per insert while the table holds more
 * than LOAD_NUM / LOAD_DEN records per bucket. Not thread-safe (the caller locks), except the
 * filter reads in livetab.h.
 */
#include "livetab.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "sys.h"

uint64_t livetab_filter[(1u << LIVETAB_FILTER_BITS) / 64];
uint16_t livetab_gran[1u << LIVETAB_FILTER_BITS];

/* Granule i's bit follows its count: set when nonzero. Writers hold the table lock (or run
   before any sampling); the read-modify-write is atomic anyway, since pins may run beside. */
static void bit_set(uint64_t i)
{
	__atomic_fetch_or(&livetab_filter[i / 64], 1ull << (i & 63), __ATOMIC_RELAXED);
}

static void bit_clear(uint64_t i)
{
	__atomic_fetch_and(&livetab_filter[i / 64], ~(1ull << (i & 63)), __ATOMIC_RELAXED);
}

/* pinned granule index ranges [lo, hi] (no wrap-around: a range that wraps is split) */
static struct {
	uint64_t lo, hi;
} pins[LIVETAB_MAX_PINS * 2];
static unsigned npins;

static void pin_indexes(uint64_t lo, uint64_t hi)
{
	if (npins >= sizeof pins / sizeof pins[0])
		return;
	pins[npins].lo = lo;
	pins[npins].hi = hi;
	npins++;
	for (uint64_t i = lo; i <= hi; i++) {
		__atomic_store_n(&livetab_gran[i], (uint16_t)(LIVETAB_GRAN_MAX << LIVETAB_GRAN_COUNT_SHIFT),
		                 __ATOMIC_RELAXED);
		bit_set(i);
	}
}

void livetab_filter_pin(const void *p, size_t n)
{
	uint64_t first = livetab_filter_index(p);
	uint64_t last = livetab_filter_index((const char *)p + (n ? n - 1 : 0));
	uint64_t granules = (((uint64_t)(uintptr_t)p + (n ? n - 1 : 0)) >> LIVETAB_FILTER_GRANULE_SHIFT) -
	                    ((uint64_t)(uintptr_t)p >> LIVETAB_FILTER_GRANULE_SHIFT);
	if (granules >= (1u << LIVETAB_FILTER_BITS)) {
		pin_indexes(0, (1u << LIVETAB_FILTER_BITS) - 1);
	} else if (first <= last) {
		pin_indexes(first, last);
	} else {
		pin_indexes(first, (1u << LIVETAB_FILTER_BITS) - 1);
		pin_indexes(0, last);
	}
}

/* set by livetab_filter_pin_all: every bit stays set, the counters are no longer kept */
static int all_pinned;

void livetab_filter_pin_all(void)
{
	__atomic_store_n(&all_pinned, 1, __ATOMIC_RELAXED);
	for (uint64_t w = 0; w < sizeof livetab_filter / sizeof livetab_filter[0]; w++)
		__atomic_store_n(&livetab_filter[w], ~0ull, __ATOMIC_RELAXED);
}

/* Granule i's word: count n, owner tag (0: not known). One store, so readers see both. */
static void gran_set(uint64_t i, unsigned n, uint16_t owner)
{
	__atomic_store_n(&livetab_gran[i], (uint16_t)(n << LIVETAB_GRAN_COUNT_SHIFT | owner),
	                 __ATOMIC_RELAXED);
}

/* A sampled block starts at p: count it; the first block of a granule is named by its tag,
   a second one makes the owner unknown (and it stays unknown until the granule empties). */
static void filter_inc(uintptr_t p)
{
	if (__atomic_load_n(&all_pinned, __ATOMIC_RELAXED))
		return;
	uint64_t i = livetab_filter_index((void *)p);
	unsigned n = livetab_gran[i] >> LIVETAB_GRAN_COUNT_SHIFT;
	if (n == 0) {
		gran_set(i, 1, livetab_gran_owner((void *)p));
		bit_set(i);
	} else if (n < LIVETAB_GRAN_MAX) {
		gran_set(i, n + 1, 0);
	}
}

/* The sampled block at p is gone: a count back at 1 does not know which block is left. */
static void filter_dec(uintptr_t p)
{
	if (__atomic_load_n(&all_pinned, __ATOMIC_RELAXED))
		return;
	uint64_t i = livetab_filter_index((void *)p);
	unsigned n = livetab_gran[i] >> LIVETAB_GRAN_COUNT_SHIFT;
	if (n == 0 || n == LIVETAB_GRAN_MAX)
		return;
	gran_set(i, n - 1, 0);
	if (n == 1)
		bit_clear(i);
}

/* One live sample: 24 bytes. size UINT32_MAX: the size is in t->big. */
struct live_rec {
	uint64_t ptr;
	uint32_t size;
	uint32_t stack;
	uint32_t next; /* next record of the chain, 0 = end */
	uint32_t thread;
} __attribute__((packed, aligned(4)));

#define BIG_SIZE UINT32_MAX
/* records per bucket before a split: chains of 1.5 on average */
#define LOAD_NUM 3
#define LOAD_DEN 2
/* 2^14 records (320 KiB) per chunk; 2^8 buckets to start */
#define CHUNK_LG 14
#define INITIAL_LG 8

static uint64_t hash_ptr(uintptr_t p)
{
	uint64_t h = ((uint64_t)p >> 3) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 32);
}

static struct live_rec *rec(const struct livetab *t, uint32_t i)
{
	return recstore_get(&t->recs, i);
}

int livetab_init(struct livetab *t, uint64_t cap)
{
	memset(t, 0, sizeof *t);
	uint64_t max = cap ? cap : (uint64_t)UINT32_MAX - 1;
	if (recstore_init(&t->recs, sizeof(struct live_rec), CHUNK_LG, max) ||
	    linhash_init(&t->index, INITIAL_LG, max / 1 + 1)) {
		livetab_release(t);
		return -ENOMEM;
	}
	t->cap = cap;
	return 0;
}

void livetab_release(struct livetab *t)
{
	recstore_release(&t->recs);
	linhash_release(&t->index);
	memset(t, 0, sizeof *t);
}

size_t livetab_bytes(const struct livetab *t)
{
	return recstore_bytes(&t->recs) + linhash_bytes(&t->index);
}

void livetab_clear(struct livetab *t)
{
	if (t->recs.chunks)
		recstore_clear(&t->recs);
	if (t->index.segs)
		linhash_clear(&t->index);
	t->n = 0;
	memset(t->big, 0, sizeof t->big);
	/* zero around the pinned ranges, never through them: a concurrent free of NULL or of a
	   pool block must not see 0 there */
	if (__atomic_load_n(&all_pinned, __ATOMIC_RELAXED))
		return;
	for (uint64_t w = 0; w < sizeof livetab_filter / sizeof livetab_filter[0]; w++) {
		for (uint64_t bits = livetab_filter[w]; bits; bits &= bits - 1) {
			uint64_t i = w * 64 + (uint64_t)__builtin_ctzll(bits);
			int pinned = 0;
			for (unsigned k = 0; k < npins; k++)
				pinned |= i >= pins[k].lo && i <= pins[k].hi;
			if (!pinned) {
				gran_set(i, 0, 0);
				bit_clear(i);
			}
		}
	}
}

/* The link that points at ptr's record (the bucket's head or a record's next), or at the
   chain's terminating 0 when ptr is not in the table. */
static uint32_t *find_link(const struct livetab *t, uintptr_t ptr)
{
	uint32_t *link = linhash_head(&t->index, hash_ptr(ptr));
	while (*link && rec(t, *link)->ptr != ptr)
		link = &rec(t, *link)->next;
	return link;
}

/* The big-size slot of ptr, or of a free slot when ptr is NULL; -1 when none. */
static int big_slot(const struct livetab *t, uintptr_t ptr)
{
	for (int k = 0; k < LIVETAB_BIG; k++)
		if (t->big[k].ptr == ptr)
			return k;
	return -1;
}

static void entry_of(const struct livetab *t, const struct live_rec *r, struct live_entry *out)
{
	out->ptr = (uintptr_t)r->ptr;
	out->stack = r->stack;
	out->thread = r->thread;
	out->size = r->size;
	if (r->size == BIG_SIZE) {
		int k = big_slot(t, (uintptr_t)r->ptr);
		out->size = k >= 0 ? t->big[k].size : BIG_SIZE;
	}
}

/* Stores e's size in r (and in the big table when it does not fit); 0 or -1 (big table full). */
static int set_size(struct livetab *t, struct live_rec *r, const struct live_entry *e)
{
	if (e->size < BIG_SIZE) {
		r->size = (uint32_t)e->size;
		return 0;
	}
	int k = big_slot(t, 0);
	if (k < 0)
		return -1;
	t->big[k].ptr = e->ptr;
	t->big[k].size = e->size;
	r->size = BIG_SIZE;
	return 0;
}

/* Splits one bucket: its records whose hash has the new bit move to the new bucket. */
static void split_one(struct livetab *t)
{
	uint32_t *from, *to;
	uint64_t bit;
	if (!linhash_split(&t->index, &from, &to, &bit))
		return;
	uint32_t *keep = from, *move = to;
	uint32_t i = *from;
	uint64_t walked = 0;
	while (i) {
		struct live_rec *r = rec(t, i);
		uint32_t next = r->next;
		if (hash_ptr((uintptr_t)r->ptr) & bit) {
			*move = i;
			move = &r->next;
		} else {
			*keep = i;
			keep = &r->next;
		}
		i = next;
		walked++;
	}
	*keep = 0;
	*move = 0;
	if (walked > t->max_chain)
		t->max_chain = walked;
}

int livetab_insert(struct livetab *t, const struct live_entry *e, struct live_entry *old)
{
	/* a stale entry of the same pointer (its free was not seen) goes first */
	int had = livetab_remove(t, e->ptr, old);
	int fail = had ? -2 : -1;
	if (t->cap && t->n >= t->cap) {
		t->dropped_full++;
		return fail;
	}
	uint32_t i = recstore_alloc(&t->recs);
	if (!i) {
		t->dropped_nomem++;
		return fail;
	}
	struct live_rec *r = rec(t, i);
	r->ptr = e->ptr;
	r->stack = e->stack;
	r->thread = e->thread;
	if (set_size(t, r, e) < 0) {
		recstore_free(&t->recs, i);
		t->dropped_nomem++;
		return fail;
	}
	/* at the chain's head: the remove above walked it already */
	uint32_t *head = linhash_head(&t->index, hash_ptr(e->ptr));
	r->next = *head;
	*head = i;
	t->n++;
	filter_inc(e->ptr);
	if (t->n * LOAD_DEN > t->index.nbuckets * LOAD_NUM)
		split_one(t);
	return had;
}

int livetab_remove(struct livetab *t, uintptr_t ptr, struct live_entry *out)
{
	if (!t->index.segs || !ptr)
		return 0;
	uint32_t *link = find_link(t, ptr);
	uint32_t i = *link;
	if (!i)
		return 0;
	struct live_rec *r = rec(t, i);
	entry_of(t, r, out);
	if (r->size == BIG_SIZE) {
		int k = big_slot(t, ptr);
		if (k >= 0)
			t->big[k].ptr = 0;
	}
	*link = r->next;
	recstore_free(&t->recs, i);
	t->n--;
	filter_dec(ptr);
	return 1;
}
