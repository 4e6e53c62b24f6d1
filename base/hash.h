/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hash.h - the hash functions the CLI's and the profile model's tables share: a 64-bit
 * finalizer that spreads an integer key (an address, a combined stack hash) over all bits, and
 * FNV-1a over bytes or a NUL-terminated string. Header-only, no allocation, async-signal-safe.
 * Not cryptographic; flame graph colours are derived from these values, so changing either
 * function changes every graph's colours.
 */
#ifndef HEAPTAP_BASE_HASH_H
#define HEAPTAP_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* The 64-bit finalizer of MurmurHash3 (a bijection: distinct keys stay distinct). */
static inline uint64_t hash_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* FNV-1a of s[0..n). */
static inline uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return h;
}

/* FNV-1a of the NUL-terminated s. */
static inline uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

#endif
