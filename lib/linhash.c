/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * linhash.c - the linear-hashing bucket directory of linhash.h: segments of chain heads
 * mapped when the split pointer first reaches them. No host malloc; not thread-safe.
 */
#include "linhash.h"

#include <errno.h>
#include <string.h>

#include "sys.h"

#define SEG_BYTES ((size_t)sizeof(uint32_t) << LINHASH_SEG_LG)

int linhash_init(struct linhash *h, unsigned initial_lg, uint64_t max_buckets)
{
	memset(h, 0, sizeof *h);
	if (initial_lg > LINHASH_SEG_LG)
		initial_lg = LINHASH_SEG_LG;
	uint64_t segs = (max_buckets + SEG_BYTES / 4 - 1) >> LINHASH_SEG_LG;
	if (segs == 0)
		segs = 1;
	if (segs > UINT32_MAX)
		segs = UINT32_MAX;
	h->dir_bytes = 4096; /* one page of segment pointers; doubles as segments come */
	h->segs = sys_map(h->dir_bytes);
	if (!h->segs)
		return -ENOMEM;
	h->max_segs = (uint32_t)segs;
	h->segs[0] = sys_map(SEG_BYTES);
	if (!h->segs[0]) {
		linhash_release(h);
		return -ENOMEM;
	}
	h->nsegs = 1;
	h->low_mask = h->initial_mask = ((uint64_t)1 << initial_lg) - 1;
	h->split = 0;
	h->nbuckets = h->low_mask + 1;
	return 0;
}

void linhash_release(struct linhash *h)
{
	if (h->segs) {
		for (uint32_t s = 0; s < h->nsegs; s++)
			sys_unmap(h->segs[s], SEG_BYTES);
		sys_unmap(h->segs, h->dir_bytes);
	}
	memset(h, 0, sizeof *h);
}

void linhash_clear(struct linhash *h)
{
	for (uint32_t s = 1; s < h->nsegs; s++) {
		sys_unmap(h->segs[s], SEG_BYTES);
		h->segs[s] = NULL;
	}
	h->nsegs = 1;
	memset(h->segs[0], 0, SEG_BYTES);
	h->low_mask = h->initial_mask;
	h->split = 0;
	h->nbuckets = h->low_mask + 1;
}

int linhash_split(struct linhash *h, uint32_t **from, uint32_t **to, uint64_t *bit)
{
	uint64_t nb = h->low_mask + 1 + h->split; /* the new bucket's number */
	uint64_t seg = nb >> LINHASH_SEG_LG;
	if (seg >= h->nsegs) {
		if (seg >= h->max_segs)
			return 0;
		if ((seg + 1) * sizeof *h->segs > h->dir_bytes) {
			uint32_t **dir = sys_map(h->dir_bytes * 2);
			if (!dir) {
				h->seg_failures++;
				return 0;
			}
			memcpy(dir, h->segs, (size_t)h->nsegs * sizeof *h->segs);
			sys_unmap(h->segs, h->dir_bytes);
			h->segs = dir;
			h->dir_bytes *= 2;
		}
		uint32_t *s = sys_map(SEG_BYTES);
		if (!s) {
			h->seg_failures++;
			return 0;
		}
		h->segs[seg] = s;
		h->nsegs = (uint32_t)seg + 1;
	}
	uint64_t old = h->split;
	*from = &h->segs[old >> LINHASH_SEG_LG][old & ((1u << LINHASH_SEG_LG) - 1)];
	*to = &h->segs[seg][nb & ((1u << LINHASH_SEG_LG) - 1)];
	*bit = h->low_mask + 1;
	h->split++;
	h->nbuckets++;
	if (h->split > h->low_mask) { /* round complete: every bucket split once */
		h->low_mask = h->low_mask * 2 + 1;
		h->split = 0;
	}
	return 1;
}

size_t linhash_bytes(const struct linhash *h)
{
	return h->dir_bytes + (size_t)h->nsegs * SEG_BYTES;
}
