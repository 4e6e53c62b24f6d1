/*
 * stacktab.c - the interning stack table of stacktab.h: an append-only array of entries and
 * PCs, found through an open-addressing index of ids. Entries are never removed except by
 * stacktab_clear. Not thread-safe (the caller locks); no host malloc.
 */
#include "stacktab.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "sys.h"

static uint64_t round_pow2(uint64_t x)
{
	uint64_t p = 1;
	while (p < x)
		p <<= 1;
	return p;
}

int stacktab_init(struct stacktab *t, uint32_t cap, uint32_t bt_max)
{
	memset(t, 0, sizeof *t);
	if (cap == 0)
		cap = 1;
	if (bt_max == 0)
		bt_max = 1;
	uint64_t idx = round_pow2((uint64_t)cap * 2);
	/* PCs: room for cap stacks of min(bt_max, 64) frames on average, at least one full one */
	uint64_t avg = bt_max < 64 ? bt_max : 64;
	t->pool_cap = (uint64_t)cap * avg + bt_max;
	t->ents_bytes = (size_t)cap * sizeof *t->ents;
	t->index_bytes = (size_t)idx * sizeof *t->index;
	t->pool_bytes = (size_t)t->pool_cap * sizeof *t->pool;
	t->ents = sys_map(t->ents_bytes);
	t->index = sys_map(t->index_bytes);
	t->pool = sys_map(t->pool_bytes);
	if (!t->ents || !t->index || !t->pool) {
		stacktab_release(t);
		return -ENOMEM;
	}
	t->cap = cap;
	t->index_mask = idx - 1;
	return 0;
}

void stacktab_release(struct stacktab *t)
{
	sys_unmap(t->ents, t->ents_bytes);
	sys_unmap(t->index, t->index_bytes);
	sys_unmap(t->pool, t->pool_bytes);
	memset(t, 0, sizeof *t);
}

void stacktab_clear(struct stacktab *t)
{
	memset(t->index, 0, t->index_bytes);
	/* give the touched pages back; they read as zero again */
	madvise(t->ents, t->ents_bytes, MADV_DONTNEED);
	madvise(t->pool, t->pool_bytes, MADV_DONTNEED);
	t->n = 0;
	t->pool_used = 0;
}

uint64_t stacktab_hash(const uintptr_t *pcs, uint32_t depth)
{
	uint64_t h = 0xcbf29ce484222325ull ^ depth;
	for (uint32_t i = 0; i < depth; i++) {
		h ^= (uint64_t)pcs[i];
		h *= 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

int64_t stacktab_intern(struct stacktab *t, const uintptr_t *pcs, uint32_t depth)
{
	uint64_t h = stacktab_hash(pcs, depth);
	uint64_t i = h & t->index_mask;
	for (;;) {
		uint32_t slot = t->index[i];
		if (slot == 0)
			break;
		struct stack_entry *e = &t->ents[slot - 1];
		if (e->hash == h && e->depth == depth &&
		    memcmp(t->pool + e->pool_off, pcs, depth * sizeof *pcs) == 0)
			return slot - 1;
		i = (i + 1) & t->index_mask;
	}
	if (t->n >= t->cap || t->pool_used + depth > t->pool_cap) {
		t->dropped_full++;
		return -1;
	}
	uint32_t id = t->n++;
	struct stack_entry *e = &t->ents[id];
	memset(e, 0, sizeof *e);
	e->hash = h;
	e->depth = depth;
	e->pool_off = t->pool_used;
	memcpy(t->pool + t->pool_used, pcs, depth * sizeof *pcs);
	t->pool_used += depth;
	t->index[i] = id + 1;
	return id;
}
