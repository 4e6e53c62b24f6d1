/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * linhash.h - the bucket directory of a linear-hashing table (Litwin): an array of 32-bit
 * chain heads that grows one bucket at a time, so a table never stops to rehash everything
 * (the longest wait of a sampling thread while a table grows is one bucket's split). Buckets
 * live in segments mapped on demand; a segment is never moved.
 *
 * This module knows only buckets. The tables built on it (livetab.c, stacktab.c) keep the
 * records, the chains through them, and the hash of each record; when linhash_split names a
 * bucket to split they move the records whose hash has the given bit into the new bucket.
 * Not thread-safe (the caller's lock); no host malloc.
 */
#ifndef HEAPTAP_LIB_LINHASH_H
#define HEAPTAP_LIB_LINHASH_H

#include <stddef.h>
#include <stdint.h>

#define LINHASH_SEG_LG 14 /* 2^14 heads (64 KiB) per segment */

struct linhash {
	uint32_t **segs;      /* the directory (grows by doubling): segment s holds buckets
	                         s << LINHASH_SEG_LG ... */
	uint32_t nsegs, max_segs;
	uint64_t low_mask;    /* 2^level * initial - 1: buckets addressed before this round */
	uint64_t split;       /* next bucket to split in this round */
	uint64_t nbuckets;    /* low_mask + 1 + split */
	uint64_t initial_mask;/* low_mask at init and after linhash_clear */
	size_t dir_bytes;
	uint64_t seg_failures;/* splits skipped because a segment could not be mapped */
};

/* Prepares 2^initial_lg buckets (initial_lg <= LINHASH_SEG_LG), up to max_buckets. 0 or
   -ENOMEM. */
int linhash_init(struct linhash *h, unsigned initial_lg, uint64_t max_buckets);
void linhash_release(struct linhash *h);
/* Empties every bucket and shrinks back to the initial size. */
void linhash_clear(struct linhash *h);

/* The chain head of the bucket hash maps to. */
static inline uint32_t *linhash_head(const struct linhash *h, uint64_t hash)
{
	uint64_t b = hash & h->low_mask;
	if (b < h->split)
		b = hash & (h->low_mask * 2 + 1);
	return &h->segs[b >> LINHASH_SEG_LG][b & ((1u << LINHASH_SEG_LG) - 1)];
}

/*
 * Adds one bucket by splitting the next one in line. On success returns 1 and sets *from (the
 * bucket split, holding its whole chain), *to (the new bucket, empty) and *bit: the caller
 * moves every record of *from whose hash has *bit set onto *to. Returns 0 when the table
 * cannot grow (no memory, or at max_buckets): the chains just get longer.
 */
int linhash_split(struct linhash *h, uint32_t **from, uint32_t **to, uint64_t *bit);

/* Bytes mapped for the directory and the segments. */
size_t linhash_bytes(const struct linhash *h);

#endif
