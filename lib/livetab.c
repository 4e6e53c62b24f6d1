/*
 * livetab.c - the live table and sampled-pointer filter of livetab.h: linear probing with
 * backward-shift deletion (no tombstones), storage mmap'd once. Not thread-safe (the caller
 * locks), except the filter reads in livetab.h.
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

static uint64_t slot_of(const struct livetab *t, uintptr_t p)
{
	return (((uint64_t)p >> 4) * 0xff51afd7ed558ccdull >> 17) & t->mask;
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

/* 256 slots of 40 bytes: 10 KiB, which stays in cache between the sampled frees */
#define INITIAL_SLOTS 256

int livetab_init(struct livetab *t, uint64_t cap)
{
	memset(t, 0, sizeof *t);
	if (cap == 0)
		cap = 1;
	uint64_t n = 2;
	while (n < cap + cap / 2 + 1)
		n <<= 1;
	t->max_slots = n;
	if (n > INITIAL_SLOTS)
		n = INITIAL_SLOTS;
	t->bytes = (size_t)n * sizeof *t->slots;
	t->slots = sys_map(t->bytes);
	if (!t->slots)
		return -ENOMEM;
	t->mask = n - 1;
	t->cap = cap;
	return 0;
}

/* Doubles the slot array (rehashing every entry) when it is half full: the table stays
   proportional to what is live, so its pages stay few and hot. Returns 0 or -ENOMEM (the
   table then keeps working, only fuller). */
static int grow(struct livetab *t)
{
	uint64_t n = (t->mask + 1) * 2;
	if (n > t->max_slots)
		return 0;
	size_t bytes = (size_t)n * sizeof *t->slots;
	struct live_entry *ns = sys_map(bytes);
	if (!ns)
		return -ENOMEM;
	struct live_entry *old = t->slots;
	uint64_t old_slots = t->mask + 1;
	size_t old_bytes = t->bytes;
	t->slots = ns;
	t->mask = n - 1;
	t->bytes = bytes;
	for (uint64_t i = 0; i < old_slots; i++) {
		if (!old[i].ptr)
			continue;
		uint64_t k = slot_of(t, old[i].ptr);
		while (ns[k].ptr)
			k = (k + 1) & t->mask;
		ns[k] = old[i];
	}
	sys_unmap(old, old_bytes);
	return 0;
}

void livetab_release(struct livetab *t)
{
	sys_unmap(t->slots, t->bytes);
	memset(t, 0, sizeof *t);
}

void livetab_clear(struct livetab *t)
{
	if (t->slots)
		madvise(t->slots, t->bytes, MADV_DONTNEED); /* zero pages again; the size stays */
	t->n = 0;
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

int livetab_insert(struct livetab *t, const struct live_entry *e, struct live_entry *old)
{
	uint64_t i = slot_of(t, e->ptr);
	while (t->slots[i].ptr) {
		if (t->slots[i].ptr == e->ptr) {
			*old = t->slots[i];
			t->slots[i] = *e;
			return 1;
		}
		i = (i + 1) & t->mask;
	}
	if (t->n >= t->cap) {
		t->dropped_full++;
		return -1;
	}
	if ((t->n + 1) * 2 > t->mask + 1 && t->mask + 1 < t->max_slots) {
		grow(t);
		i = slot_of(t, e->ptr);
		while (t->slots[i].ptr)
			i = (i + 1) & t->mask;
	}
	t->slots[i] = *e;
	t->n++;
	filter_inc(e->ptr);
	return 0;
}

int livetab_remove(struct livetab *t, uintptr_t ptr, struct live_entry *out)
{
	if (!t->slots || !ptr)
		return 0;
	uint64_t i = slot_of(t, ptr);
	for (;;) {
		if (t->slots[i].ptr == 0)
			return 0;
		if (t->slots[i].ptr == ptr)
			break;
		i = (i + 1) & t->mask;
	}
	*out = t->slots[i];
	/* backward-shift: pull later members of the cluster into the hole when allowed */
	uint64_t hole = i;
	uint64_t j = i;
	for (;;) {
		j = (j + 1) & t->mask;
		if (t->slots[j].ptr == 0)
			break;
		uint64_t home = slot_of(t, t->slots[j].ptr);
		/* j may move to hole if home is not cyclically in (hole, j] */
		int stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
		if (!stays) {
			t->slots[hole] = t->slots[j];
			hole = j;
		}
	}
	memset(&t->slots[hole], 0, sizeof t->slots[hole]);
	t->n--;
	filter_dec(ptr);
	return 1;
}
