/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * livetab.h - the live table: every sampled pointer still alive, with its stack id, size and
 * the fixed-point counts it added to its stack; plus the sampled-pointer filter that lets
 * free() learn in a nanosecond that a pointer was never sampled.
 *
 * The filter has one bit per 4 KiB granule of address space (modulo 2^20 granules: a 4 GiB
 * window), set while a sampled block starts in the granule. Behind the bits, a 16-bit word
 * per granule (livetab_gran, written only under the caller's lock) counts the blocks,
 * incremented on insert and decremented on remove (saturating: a count that reaches 63 stays
 * there until livetab_clear), and while the count is 1 names the one block by its offset in
 * the granule; a bit is set exactly when its count is nonzero. A clear bit proves the pointer
 * is not in the table. The bits, not the words, are what free() reads: 128 KiB in all, a
 * cache line per 2 MiB of heap (docs/INTERNALS.md "Fast-path cost" has the measurements behind
 * the layout). On a set bit, the word tells most frees of the granule's other blocks that they
 * were not sampled without the lock (livetab_may_hold).
 * The table itself is a linear-hashing table (linhash.h) of 20-byte records (pointer, size,
 * stack id, chain link, allocating thread) kept in a chunked record store (recstore.h): about
 * 27 bytes per live sample, growing one bucket and one chunk at a time with no rehash and no ceiling unless the
 * user sets a budget (prof_max_live). NOT thread-safe except livetab_filter_hit: the caller
 * holds the collector's table lock. No host malloc.
 */
#ifndef HEAPTAP_LIB_LIVETAB_H
#define HEAPTAP_LIB_LIVETAB_H

#include <stddef.h>
#include <stdint.h>

#include "linhash.h"
#include "recstore.h"

#define LIVETAB_FILTER_BITS 20
/* One bit (and counter) per 4 KiB of address space (see livetab_filter_index). */
#define LIVETAB_FILTER_GRANULE_SHIFT 12

/* What a caller inserts and gets back; the unbiased counts a sample added to its stack are a
   function of its size and the sampling period (core.c recomputes them on removal). */
struct live_entry {
	uintptr_t ptr;     /* != 0 */
	uint64_t size;     /* requested bytes */
	uint32_t stack;    /* stack id */
	uint32_t thread;   /* the allocating thread's number (tstate.serial), 0 = unknown */
};

/* Sizes of 2^32 - 1 bytes and more are kept beside the records, in a table this long. */
#define LIVETAB_BIG 64

struct livetab {
	struct recstore recs;  /* the records (livetab.c's struct live_rec) */
	struct linhash index;  /* buckets of chains of record numbers */
	uint64_t n;            /* live entries */
	uint64_t cap;          /* the budget (prof_max_live); 0 = none */
	uint64_t dropped_full; /* inserts refused at the budget */
	uint64_t dropped_nomem;/* inserts refused because no memory could be mapped */
	uint64_t max_chain;    /* longest chain walked by a split (for statistics) */
	struct {
		uintptr_t ptr;
		uint64_t size;
	} big[LIVETAB_BIG];    /* ptr 0 = free */
};

/* the bits free() reads: bit g % 64 of word g / 64 is granule g's */
extern uint64_t livetab_filter[(1u << LIVETAB_FILTER_BITS) / 64]
	__attribute__((visibility("hidden")));
/*
 * Per granule: bits 10-15 how many sampled blocks start in it (LIVETAB_GRAN_MAX = pinned or
 * saturated), bits 0-9 the block's livetab_gran_owner while the count is 1 and the block is
 * known, else 0. One 16-bit store per change, so a lock-free reader sees a consistent pair.
 */
extern uint16_t livetab_gran[1u << LIVETAB_FILTER_BITS] __attribute__((visibility("hidden")));
#define LIVETAB_GRAN_COUNT_SHIFT 10
#define LIVETAB_GRAN_MAX 63
#define LIVETAB_GRAN_OWNER_MASK 0x3ffu

/* The owner tag of p in its granule's word: its offset in the granule in 8-byte units, plus
   1 (0 means "not known"). Blocks are at least 8-byte aligned, so distinct blocks of one
   granule have distinct tags; any p has the tag of the sampled block it is. */
static inline uint16_t livetab_gran_owner(const void *p)
{
	return (uint16_t)((((uintptr_t)p & ((1u << LIVETAB_FILTER_GRANULE_SHIFT) - 1)) >> 3) + 1);
}

/*
 * The granule of p: its 4 KiB granule, modulo 2^20 (a 4 GiB window). Not a scrambling hash on
 * purpose: frees of nearby objects read the same word of the filter (64 granules, 256 KiB of
 * heap), so the filter costs about as many cache lines as the heap has MiB / 2. A granule where
 * a live sample starts sends every free of a block starting there to the slow path, unless the
 * granule word rules it out (docs/INTERNALS.md "Fast-path cost": why 4 KiB).
 */
static inline uint64_t livetab_filter_index(const void *p)
{
	return ((uint64_t)(uintptr_t)p >> LIVETAB_FILTER_GRANULE_SHIFT) &
	       ((1u << LIVETAB_FILTER_BITS) - 1);
}

/* 1 if p may be a sampled pointer (lock-free; one relaxed load). */
static inline int livetab_filter_hit(const void *p)
{
	uint64_t g = (uint64_t)(uintptr_t)p >> LIVETAB_FILTER_GRANULE_SHIFT;
	uint64_t w = __atomic_load_n(&livetab_filter[(g / 64) & ((1u << LIVETAB_FILTER_BITS) / 64 - 1)],
	                             __ATOMIC_RELAXED);
	return (int)((w >> (g & 63)) & 1);
}

/*
 * After livetab_filter_hit(p): 0 if p is certainly not in the table, because its granule holds
 * exactly one sampled block and that block is another one; else 1 (take the lock and look).
 * Lock-free, one relaxed load. Sound for a p the caller owns (it is freeing p): if p is in the
 * table, its insert happened before this call, and every word written since, under the lock,
 * counts p; a count of 1 then has owner p's tag or 0. Frees of a granule's neighbours of a
 * sample, about two per sample on bench/mallocbench, skip the lock and the table this way.
 */
static inline int livetab_may_hold(const void *p)
{
	uint16_t v = __atomic_load_n(&livetab_gran[livetab_filter_index(p)], __ATOMIC_RELAXED);
	uint16_t owner = v & LIVETAB_GRAN_OWNER_MASK;
	return (v >> LIVETAB_GRAN_COUNT_SHIFT) != 1 || owner == 0 || owner == livetab_gran_owner(p);
}

/*
 * The free paths' test: 0 if p is certainly not a sampled block (its filter bit is clear, or
 * its granule's one sample is another block), so the real free may take it without the slow
 * path; 1 if p may be sampled, or is NULL or a pool block (pinned: count LIVETAB_GRAN_MAX),
 * or stats_exact pinned the whole filter (livetab_filter_pin_all runs at initialisation,
 * before any sample: every word is 0 or pinned, and 0 never rules out). The second load is
 * made only on a filter hit.
 */
static inline int livetab_maybe_sampled(const void *p)
{
	return __builtin_expect(livetab_filter_hit(p), 0) && livetab_may_hold(p);
}

/*
 * Pins the counts of the granules covering [p, p + n) (n >= 1) at LIVETAB_GRAN_MAX: frees
 * there always take the slow path. real.c pins NULL's granule and the bootstrap pool, so
 * free's fast path needs no test of its own for them. Up to LIVETAB_MAX_PINS ranges; they
 * survive livetab_clear. Call it before any pointer of the range can be freed (no lock; no
 * malloc).
 */
#define LIVETAB_MAX_PINS 4
void livetab_filter_pin(const void *p, size_t n);
/* Sets every bit of the filter for good (whole-filter mode; the counts are no longer
   kept): every free takes the slow path. For stats_exact; irreversible (survives inserts,
   removes and livetab_clear). No lock; no malloc. */
void livetab_filter_pin_all(void);

/* Prepares an empty table; cap is the budget (0 = none). Returns 0 or -ENOMEM. */
int livetab_init(struct livetab *t, uint64_t cap);
/* Bytes the table has mapped (records, buckets, directories; not the filter). */
size_t livetab_bytes(const struct livetab *t);
void livetab_release(struct livetab *t);
/* Forgets every entry, gives the memory back and zeroes the filter, except the pinned
   counts. */
void livetab_clear(struct livetab *t);

/*
 * Inserts e (e->ptr != 0). Returns 0 when inserted, 1 when an entry for the same pointer
 * existed (it is replaced and copied to *old so the caller can undo its counts), -1 when the
 * budget is reached (dropped_full is incremented) or no memory can be mapped (dropped_nomem),
 * -2 when an entry for the same pointer existed (removed, in *old) and e could not be
 * inserted.
 */
int livetab_insert(struct livetab *t, const struct live_entry *e, struct live_entry *old);

/* Removes ptr; returns 1 and copies the entry to *out when it was there, else 0. */
int livetab_remove(struct livetab *t, uintptr_t ptr, struct live_entry *out);

#endif
