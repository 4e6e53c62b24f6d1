/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bisect.h - binary search over any sorted sequence the caller describes by a key function:
 * the count of entries whose key is <= x (so the last such entry is that count minus one) or
 * < x (the first entry >= x). One loop for the dozen look-ups of the CLI, the profile model
 * and the collector that find "the last range starting at or before an address" or "the
 * entry with this id". Header-only, no allocation, async-signal-safe (the collector's
 * unwinder uses it); with a static key function the call inlines.
 */
#ifndef HEAPTAP_BASE_BISECT_H
#define HEAPTAP_BASE_BISECT_H

#include <stddef.h>
#include <stdint.h>

/* key(ctx, i) for 0 <= i < n must not decrease as i grows. */
typedef uint64_t (*bisect_key_fn)(const void *ctx, size_t i);

/* The number of leading entries whose key is <= x. */
static inline size_t bisect_count_le(size_t n, uint64_t x, bisect_key_fn key, const void *ctx)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (key(ctx, mid) <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The number of leading entries whose key is < x: the index of the first entry >= x. */
static inline size_t bisect_count_lt(size_t n, uint64_t x, bisect_key_fn key, const void *ctx)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (key(ctx, mid) < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
