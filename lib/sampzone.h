/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sampzone.h - the sampled-object zone: memory for SAMPLED blocks only, in a 2^40-byte range
 * of address space at a random base, so free() learns "not sampled" from one comparison of
 * the pointer with the zone's base (real.h keeps the base next to real.free) instead of a
 * load of the sampled-pointer filter (livetab.h) that the host's traffic keeps evicting.
 *
 * Nothing is reserved up front: memory is mapped inside the range on demand with
 * MAP_FIXED_NOREPLACE (never over anything). The first SAMPZONE_SMALL_REGION bytes hold 2 MiB
 * slabs cut into runs of 1-4 pages for blocks of up to SAMPZONE_SMALL_MAX bytes (recycled
 * through one free list per run length; slabs are never unmapped); the rest holds one mapping
 * per larger block at a wrapping bump cursor (unmapped on release). The zone keeps its own
 * index of what it handed out (a word per small-region page; an open-addressing table for the
 * large blocks), in memory it maps itself, so a pointer in the range it does not know is told
 * apart (the caller gives it to the real allocator).
 *
 * Not the profile: the live and stack tables (core.c) record zone blocks like any other.
 * Not an allocator for anything but sampled blocks. Thread-safe (one mutex,
 * LOCKRANK_ZONE; the `nested` variants only try it). No host malloc.
 */
#ifndef HEAPTAP_LIB_SAMPZONE_H
#define HEAPTAP_LIB_SAMPZONE_H

#include <stddef.h>
#include <stdint.h>

#include "lockrank.h"

#define SAMPZONE_SIZE ((uintptr_t)1 << 40)
/* A base no user pointer is in (the top 1 TiB of the address space: the kernel's): real.h's
   zone base while there is no zone. NULL is not in it either. */
#define SAMPZONE_OFF ((uintptr_t)0 - SAMPZONE_SIZE)
/* Blocks up to this size (and alignment up to a page) get a run of whole pages. */
#define SAMPZONE_SMALL_MAX (16u * 1024)
#define SAMPZONE_PAGE 4096u
#define SAMPZONE_SLAB ((size_t)2 << 20)
/* The slab region's size in the full zone. Its index is a 4-byte word per page of the slabs
   mapped so far (2 KiB a slab, in chunks of SAMPZONE_META_CHUNK_SLABS slabs) under a
   directory of a pointer per slab slot (16 KiB for the full zone): address space in
   proportion to the slabs in use, none before the first sample. */
#define SAMPZONE_SMALL_REGION ((size_t)4 << 30)
/* The zone is used only at sampling periods of at least this many bytes: a page per sampled
   block then costs at most 3 % of the bytes each sample stands for. */
#define SAMPZONE_MIN_PERIOD ((uint64_t)128 * 1024)
#define SAMPZONE_SLAB_PAGES ((uint32_t)(SAMPZONE_SLAB / SAMPZONE_PAGE))
#define SAMPZONE_META_CHUNK_SLABS 32u
#define SAMPZONE_META_CHUNKS 64u /* chunks of index words at most (the full zone's 2048 slabs) */

/* Released large mappings kept for reuse: at most this many, of at most SAMPZONE_CACHE_ONE
   bytes each and SAMPZONE_CACHE_BYTES together (the rest are unmapped). */
#define SAMPZONE_CACHE_SLOTS 64
#define SAMPZONE_CACHE_ONE ((size_t)8 << 20)
#define SAMPZONE_CACHE_BYTES ((size_t)64 << 20)

struct sampzone_big {
	uintptr_t ptr; /* 0 = empty slot */
	size_t len;    /* mapped bytes */
};

struct sampzone {
	struct ranked_mutex lock;
	uintptr_t base;        /* the range [base, base + small_bytes + large_bytes) */
	size_t small_bytes;    /* the slab region at base (a multiple of SAMPZONE_SLAB) */
	size_t large_bytes;    /* the large-block region after it */
	uint32_t **slab_meta;  /* per slab slot: its pages' index words (sampzone.c), or NULL;
	                          the directory itself NULL until the first slab */
	uint32_t *meta_chunk[SAMPZONE_META_CHUNKS]; /* where the index words are cut from */
	uint32_t meta_chunks;  /* chunks mapped */
	uint32_t meta_chunk_used;/* slabs' words cut from the last chunk */
	size_t slab_next;      /* offset of the next slab to map */
	uint32_t bump, bump_end;/* the current slab's unused pages [bump, bump_end) */
	uint32_t free_head[5]; /* per run length 1-4: first free run's page + 1, 0 = none */
	size_t cursor;         /* the large region's bump cursor (offset in it) */
	struct sampzone_big *big;
	/* released large mappings kept for reuse (not unmapped): a large sampled block then
	   costs neither mmap and munmap nor page faults, like the allocator's own heap */
	uint32_t cache_pages[SAMPZONE_CACHE_SLOTS]; /* lengths in pages, ascending (sampzone.c) */
	uintptr_t cache_ptr[SAMPZONE_CACHE_SLOTS];
	size_t cache_n, cache_bytes;
	size_t cache_max;      /* SAMPZONE_CACHE_BYTES (tests set less) */
	size_t big_cap, big_n; /* slots (a power of two), used */
	int broken;            /* MAP_FIXED_NOREPLACE unsupported: the zone serves nothing */
	/* statistics (under the lock; read racily) */
	uint64_t mapped;       /* bytes mapped for blocks (slabs and large mappings, cached ones too) */
	uint64_t cache_hits;   /* large blocks served from a cached mapping */
	uint64_t index_bytes;  /* bytes mapped for the index */
	uint64_t live;         /* blocks handed out and not released */
	uint64_t refused;      /* requests the zone could not serve (caller falls back) */
	uint64_t leaked;       /* releases skipped: lock busy inside the profiler */
};

/* The collector's zone (core.c initialises it). */
extern struct sampzone sampzone_main __attribute__((visibility("hidden")));

/* Prepares z over [base, base + small_bytes + large_bytes) (base page-aligned, small_bytes a
   multiple of SAMPZONE_SLAB; nothing is mapped yet). */
void sampzone_init(struct sampzone *z, uintptr_t base, size_t small_bytes, size_t large_bytes);
/* mmap(hint, len, read-write, private anonymous, MAP_FIXED_NOREPLACE) as a raw system call
   (no sanitizer interceptor; MAP_FAILED with errno, always under ThreadSanitizer). The
   result may differ from hint on a kernel without NOREPLACE: the caller checks. */
void *sampzone_map_exact(uintptr_t hint, size_t len);
/* A random 1 TiB-aligned base between 16 TiB and 64 TiB. */
uintptr_t sampzone_pick_base(void);

/* 1 if p is in z's range (known to z or not). */
static inline int sampzone_in_range(const struct sampzone *z, const void *p)
{
	return (uintptr_t)p - z->base < z->small_bytes + z->large_bytes;
}

/*
 * A block of n bytes (n >= 1) aligned to align (0 or a power of two <= SAMPZONE_PAGE), at a
 * page boundary; zeroed when `zero` (fresh mappings are zero already), or NULL when the zone
 * cannot serve it (counted in refused; the caller uses the real allocator). nested: only try
 * the lock (a call from inside the profiler).
 */
void *sampzone_alloc(struct sampzone *z, size_t n, size_t align, int zero, int nested);
/* The usable size of p (its run or mapping), or 0 if z did not hand p out; SIZE_MAX when
   nested and the lock (needed for a large block) is busy. */
size_t sampzone_size(struct sampzone *z, const void *p, int nested);
/* Takes p back: 1 released, 0 not z's (the caller hands it to the real allocator), -1 not
   released because the lock was busy and nested was set (counted in leaked). */
int sampzone_release(struct sampzone *z, void *p, int nested);
/* Unmaps everything, slab slots it skipped included (unit tests, on a range nothing else
   maps). */
void sampzone_destroy(struct sampzone *z);

/* pthread_atfork: the zone lock, taken after the table lock. */
void sampzone_fork_prepare(void);
void sampzone_fork_release(void);

#endif
