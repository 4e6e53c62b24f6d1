/*
 * stacktab.h - the stack table: interns each distinct vector of program counters once and
 * keeps, per stack, the unbiased live objects/bytes and cumulative
 * allocations as fixed-point integers, so that adding and removing the same sample cancels
 * exactly.
 *
 * Storage is mmap'd at init with a hard capacity; interning fails (and counts a drop) when
 * the table or its PC pool is full. NOT thread-safe: the caller holds the collector's table
 * lock (core.c) around every call. Never allocates from the host heap after init.
 */
#ifndef HEAPTAP_LIB_STACKTAB_H
#define HEAPTAP_LIB_STACKTAB_H

#include <stddef.h>
#include <stdint.h>

/* Object counts are stored multiplied by 2^STACKTAB_OBJS_SHIFT; bytes are stored as is. */
#define STACKTAB_OBJS_SHIFT 16

struct stack_entry {
	uint64_t hash;
	uint64_t pool_off;      /* index of pcs[0] in the PC pool */
	uint32_t depth;
	uint32_t pad;
	uint64_t live_objs_fp;  /* sum of weight * 2^16 over live samples */
	uint64_t live_bytes_fp; /* sum of round(weight * size) over live samples */
	uint64_t alloc_objs_fp; /* cumulative, always (dumps show it with prof_accum; delta.h) */
	uint64_t alloc_bytes_fp;
	uint64_t live_samples;  /* raw sampled objects alive */
};

struct stacktab {
	struct stack_entry *ents;
	uint32_t n, cap;        /* entries used, capacity */
	uint32_t *index;        /* open addressing: id + 1, 0 = empty */
	uint64_t index_mask;
	uintptr_t *pool;        /* all interned PCs, back to back */
	uint64_t pool_used, pool_cap;
	uint64_t dropped_full;  /* intern failures: table or pool full */
	size_t ents_bytes, index_bytes, pool_bytes;
};

/* Maps storage for cap stacks of up to bt_max frames. Returns 0 or -ENOMEM. */
int stacktab_init(struct stacktab *t, uint32_t cap, uint32_t bt_max);
/* Unmaps everything. */
void stacktab_release(struct stacktab *t);
/* Forgets every stack (heaptap_reset); keeps the storage and the drop counter. */
void stacktab_clear(struct stacktab *t);

/* Returns the id of the stack pcs[0..depth) (depth >= 1), interning it when new, or -1 when
   the table is full (dropped_full is then incremented). */
int64_t stacktab_intern(struct stacktab *t, const uintptr_t *pcs, uint32_t depth);

/* The entry of id (valid id from stacktab_intern). */
static inline struct stack_entry *stacktab_get(struct stacktab *t, uint32_t id)
{
	return &t->ents[id];
}
/* Its PCs. */
static inline const uintptr_t *stacktab_pcs(const struct stacktab *t, const struct stack_entry *e)
{
	return t->pool + e->pool_off;
}

/* Hash of a PC vector (exposed for tests). */
uint64_t stacktab_hash(const uintptr_t *pcs, uint32_t depth);

#endif
