/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pages.h - memory straight from the kernel, for code that may not call malloc (the collector
 * and the in-process writers): rounding a size or an address to whole pages, and mapping and
 * unmapping anonymous, zero-filled, private pages. Header-only; async-signal-safe (mmap and
 * munmap are system calls). Not an allocator: every mapping is the caller's to unmap with the
 * size it mapped.
 */
#ifndef HEAPTAP_BASE_PAGES_H
#define HEAPTAP_BASE_PAGES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#define PAGES_SIZE 4096u

/* n rounded up to whole pages (an address: the page boundary at or above it). */
static inline uint64_t pages_round_up(uint64_t n)
{
	return (n + PAGES_SIZE - 1) & ~(uint64_t)(PAGES_SIZE - 1);
}

/* n rounded down to a page boundary. */
static inline uint64_t pages_round_down(uint64_t n)
{
	return n & ~(uint64_t)(PAGES_SIZE - 1);
}

/* n bytes (a multiple of the page size or not) of fresh zero pages, or NULL. Address space is
   not reserved against overcommit (MAP_NORESERVE): pages cost memory when first touched. */
static inline void *pages_map(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
	               -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Unmaps what pages_map(n) returned; NULL is ignored. */
static inline void pages_unmap(void *p, size_t n)
{
	if (p)
		munmap(p, n);
}

#endif
