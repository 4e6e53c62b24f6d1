/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stacktab.h - the stack table: interns each distinct vector of program counters once and
 * keeps, per stack, the unbiased live objects/bytes and cumulative
 * allocations as fixed-point integers, so that adding and removing the same sample cancels
 * exactly.
 *
 * The table grows as stacks arrive (entries in a chunked record store, recstore.h; a
 * linear-hashing index, linhash.h; PCs in blocks of size classes of 8 frames), with no
 * ceiling unless the user sets a budget (prof_max_stacks). With recycling on (the collector
 * turns it on unless prof_accum keeps cumulative counts), a stack left without live samples
 * is queued, and the oldest queued stacks are freed for reuse once the queue is longer than
 * the stacks in use (and 1024): a process that runs through millions of code paths keeps
 * seeing new ones with bounded memory. A queued stack sampled again leaves the queue. While a
 * dump holds the table (stacktab_hold), nothing is freed, so the PCs a dump reads stay put.
 *
 * NOT thread-safe: the caller holds the collector's table lock (core.c) around every call.
 * Never allocates from the host heap.
 */
#ifndef HEAPTAP_LIB_STACKTAB_H
#define HEAPTAP_LIB_STACKTAB_H

#include <stddef.h>
#include <stdint.h>

#include "linhash.h"
#include "recstore.h"

/* Object counts are stored multiplied by 2^STACKTAB_OBJS_SHIFT; bytes are stored as is. */
#define STACKTAB_OBJS_SHIFT 16
/* PC blocks come in classes of 8 frames: class c holds 8 (c + 1) PCs. */
#define STACKTAB_PC_CLASSES 34 /* up to 272 frames */

struct stack_entry {
	uint64_t hash;
	uintptr_t *pcs;         /* its PC block */
	uint32_t depth;         /* 0: a free entry */
	uint32_t next;          /* the index chain: id + 1 of the next entry, 0 = end */
	uint32_t qprev, qnext;  /* the recycling queue: ids + 1, while queued */
	uint32_t queued;        /* 1 while in the recycling queue */
	uint32_t gen;           /* bumped each time the entry is reused for another stack */
	uint64_t live_objs_fp;  /* sum of weight * 2^16 over live samples */
	uint64_t live_bytes_fp; /* sum of round(weight * size) over live samples */
	uint64_t alloc_objs_fp; /* cumulative, always (dumps show it with prof_accum; delta.h) */
	uint64_t alloc_bytes_fp;
	uint64_t live_samples;  /* raw sampled objects alive */
	uint64_t xfree_objs_fp; /* cumulative: sampled objects freed by another thread than the */
	uint64_t xfree_bytes_fp;/* one that allocated them (weighted like live_*) */
};

struct stacktab_pcclass {
	uintptr_t *free;        /* freed blocks, linked through their first word */
	char *bump;             /* the rest of the newest chunk */
	size_t left;
};

struct stacktab {
	struct recstore ents;   /* struct stack_entry; id = record number - 1 */
	struct linhash index;
	uint64_t cap;           /* budget: stacks held at once (0 = none) */
	uint32_t bt_max;        /* deepest stack interned */
	int recycle;            /* free stacks left without live samples */
	uint32_t hold;          /* dumps reading the table: nothing is freed meanwhile */
	uint32_t qhead, qtail;  /* the recycling queue, oldest first: ids + 1 */
	uint64_t queued;        /* stacks in it */
	uint64_t recycled;      /* stacks freed for reuse since start */
	uint64_t recycled_objs_fp, recycled_bytes_fp; /* their cumulative alloc counts when freed
	                           (delta.c: what a window lost with them) */
	struct stacktab_pcclass classes[STACKTAB_PC_CLASSES];
	void *chunks;           /* PC chunks, linked through their first word */
	size_t pc_bytes;        /* PC chunks mapped */
	size_t pc_used;         /* bytes of PC blocks in use */
	uint64_t dropped_full;  /* intern failures at the budget */
	uint64_t dropped_nomem; /* intern failures: no memory could be mapped */
};

/* Prepares an empty table for stacks of up to bt_max frames (<= 8 * STACKTAB_PC_CLASSES);
   cap is the budget (0 = none). Returns 0 or -ENOMEM. */
int stacktab_init(struct stacktab *t, uint64_t cap, uint32_t bt_max);
/* Unmaps everything. */
void stacktab_release(struct stacktab *t);
/* Forgets every stack (heaptap_reset) and gives their memory back; keeps the drop counters. */
void stacktab_clear(struct stacktab *t);

/* Returns the id of the stack pcs[0..depth) (1 <= depth <= bt_max), interning it when new, or
   -1 when it cannot be (dropped_full or dropped_nomem is then incremented). A queued stack
   found leaves the queue: the caller is about to add a sample to it. */
int64_t stacktab_intern(struct stacktab *t, const uintptr_t *pcs, uint32_t depth);

/* Tells the table that stack id has no live sample left: with recycling on it is queued. */
void stacktab_unused(struct stacktab *t, uint32_t id);

/* Rewrites every held stack's PCs through map (an unloaded library's frames moved to its
   synthetic addresses, maps.h); returns how many stacks changed. An entry keeps the hash of
   the PCs it was interned with: it stays in that index chain (lookups compare the PCs, so the
   old vector, now another library's, no longer matches it), and delta.h's per-id hashes stay
   valid. */
uint64_t stacktab_rewrite_pcs(struct stacktab *t, uintptr_t (*map)(uintptr_t pc, const void *ctx),
                              const void *ctx);

/* A dump starts (+1) or stops (-1) reading stacks and their PCs outside the lock. */
void stacktab_hold(struct stacktab *t, int delta);

/* The entry of id (valid id from stacktab_intern); ids below stacktab_id_end. */
static inline struct stack_entry *stacktab_get(const struct stacktab *t, uint32_t id)
{
	return recstore_get(&t->ents, id + 1);
}
/* One past the highest id handed out: walk 0..end-1 and skip entries of depth 0. */
static inline uint32_t stacktab_id_end(const struct stacktab *t)
{
	return t->ents.used;
}
/* Its PCs. */
static inline const uintptr_t *stacktab_pcs(const struct stacktab *t, const struct stack_entry *e)
{
	(void)t;
	return e->pcs;
}
/* Stacks held (queued ones included). */
static inline uint64_t stacktab_count(const struct stacktab *t)
{
	return t->ents.live;
}
/* Bytes mapped for entries, index and PCs. */
size_t stacktab_bytes(const struct stacktab *t);

/* Hash of a PC vector (exposed for tests). */
uint64_t stacktab_hash(const uintptr_t *pcs, uint32_t depth);

#endif
