/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stacktab.c - the interning stack table of stacktab.h: entries in a chunked record store,
 * chains of ids in a linear-hashing index (one bucket split per new stack while there are
 * more than 1.5 stacks per bucket), PC blocks from per-class free lists and bump chunks, and
 * the recycling queue. Not thread-safe (the caller locks); no host malloc.
 */
#include "stacktab.h"

#include <errno.h>
#include <string.h>

#include "sys.h"

#define ENTRY_CHUNK_LG 12          /* 4096 entries per chunk */
#define INDEX_INITIAL_LG 8
#define PC_CHUNK ((size_t)64 << 10) /* 64 KiB of PC blocks per chunk */
#define PC_CHUNK_HEAD 16           /* the chunk list's link */
#define QUEUE_FLOOR 1024           /* queued stacks kept before any is freed */

int stacktab_init(struct stacktab *t, uint64_t cap, uint32_t bt_max)
{
	memset(t, 0, sizeof *t);
	if (bt_max == 0)
		bt_max = 1;
	if (bt_max > 8 * STACKTAB_PC_CLASSES)
		bt_max = 8 * STACKTAB_PC_CLASSES;
	uint64_t max = cap ? cap : (uint64_t)UINT32_MAX - 1;
	if (recstore_init(&t->ents, sizeof(struct stack_entry), ENTRY_CHUNK_LG, max) ||
	    linhash_init(&t->index, INDEX_INITIAL_LG, max + 1)) {
		stacktab_release(t);
		return -ENOMEM;
	}
	t->cap = cap;
	t->bt_max = bt_max;
	return 0;
}

static void free_pc_chunks(struct stacktab *t)
{
	void *c = t->chunks;
	while (c) {
		void *next;
		memcpy(&next, c, sizeof next);
		sys_unmap(c, PC_CHUNK);
		c = next;
	}
	t->chunks = NULL;
	t->pc_bytes = t->pc_used = 0;
	memset(t->classes, 0, sizeof t->classes);
}

void stacktab_release(struct stacktab *t)
{
	free_pc_chunks(t);
	recstore_release(&t->ents);
	linhash_release(&t->index);
	memset(t, 0, sizeof *t);
}

void stacktab_clear(struct stacktab *t)
{
	free_pc_chunks(t);
	recstore_clear(&t->ents);
	linhash_clear(&t->index);
	t->qhead = t->qtail = 0;
	t->queued = 0;
}

size_t stacktab_bytes(const struct stacktab *t)
{
	return recstore_bytes(&t->ents) + linhash_bytes(&t->index) + t->pc_bytes;
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

/* ---- PC blocks ---- */

static unsigned pc_class(uint32_t depth)
{
	return (depth - 1) / 8;
}

static size_t class_bytes(unsigned c)
{
	return (size_t)(c + 1) * 8 * sizeof(uintptr_t);
}

static uintptr_t *pc_alloc(struct stacktab *t, uint32_t depth)
{
	unsigned c = pc_class(depth);
	struct stacktab_pcclass *k = &t->classes[c];
	size_t need = class_bytes(c);
	uintptr_t *b = k->free;
	if (b) {
		memcpy(&k->free, b, sizeof k->free);
	} else {
		if (k->left < need) {
			char *chunk = sys_map(PC_CHUNK);
			if (!chunk)
				return NULL;
			memcpy(chunk, &t->chunks, sizeof t->chunks);
			t->chunks = chunk;
			t->pc_bytes += PC_CHUNK;
			k->bump = chunk + PC_CHUNK_HEAD;
			k->left = PC_CHUNK - PC_CHUNK_HEAD;
		}
		b = (uintptr_t *)(void *)k->bump;
		k->bump += need;
		k->left -= need;
	}
	t->pc_used += need;
	return b;
}

static void pc_free(struct stacktab *t, uintptr_t *b, uint32_t depth)
{
	struct stacktab_pcclass *k = &t->classes[pc_class(depth)];
	memcpy(b, &k->free, sizeof k->free);
	k->free = b;
	t->pc_used -= class_bytes(pc_class(depth));
}

/* ---- the recycling queue ---- */

static void queue_remove(struct stacktab *t, struct stack_entry *e, uint32_t id1)
{
	if (e->qprev)
		stacktab_get(t, e->qprev - 1)->qnext = e->qnext;
	else
		t->qhead = e->qnext;
	if (e->qnext)
		stacktab_get(t, e->qnext - 1)->qprev = e->qprev;
	else
		t->qtail = e->qprev;
	(void)id1;
	e->qprev = e->qnext = 0;
	e->queued = 0;
	t->queued--;
}

void stacktab_unused(struct stacktab *t, uint32_t id)
{
	struct stack_entry *e = stacktab_get(t, id);
	if (!t->recycle || e->queued || e->live_samples || e->depth == 0)
		return;
	e->queued = 1;
	e->qnext = 0;
	e->qprev = t->qtail;
	if (t->qtail)
		stacktab_get(t, t->qtail - 1)->qnext = id + 1;
	else
		t->qhead = id + 1;
	t->qtail = id + 1;
	t->queued++;
}

uint64_t stacktab_rewrite_pcs(struct stacktab *t, uintptr_t (*map)(uintptr_t pc, const void *ctx),
                              const void *ctx)
{
	uint64_t changed = 0;
	uint32_t end = stacktab_id_end(t);
	for (uint32_t id = 0; id < end; id++) {
		struct stack_entry *e = stacktab_get(t, id);
		int hit = 0;
		for (uint32_t i = 0; i < e->depth; i++) {
			uintptr_t pc = map(e->pcs[i], ctx);
			if (pc != e->pcs[i]) {
				/* a dump holding the table may read the PCs meanwhile: one word at a time */
				__atomic_store_n(&e->pcs[i], pc, __ATOMIC_RELAXED);
				hit = 1;
			}
		}
		changed += (uint64_t)hit;
	}
	return changed;
}

void stacktab_hold(struct stacktab *t, int delta)
{
	t->hold = (uint32_t)((int)t->hold + delta);
}

/* Frees the oldest queued stack for reuse. */
static void recycle_oldest(struct stacktab *t)
{
	uint32_t id1 = t->qhead;
	struct stack_entry *e = stacktab_get(t, id1 - 1);
	queue_remove(t, e, id1);
	uint32_t *link = linhash_head(&t->index, e->hash);
	while (*link && *link != id1)
		link = &stacktab_get(t, *link - 1)->next;
	if (*link)
		*link = e->next;
	pc_free(t, e->pcs, e->depth);
	t->recycled_objs_fp += e->alloc_objs_fp;
	t->recycled_bytes_fp += e->alloc_bytes_fp;
	e->depth = 0;
	e->pcs = NULL;
	recstore_free(&t->ents, id1);
	t->recycled++;
}

/* Whether the oldest queued stack may be freed now: the queue is longer than the floor and
   than the stacks in use, and no dump is reading. */
static int may_recycle(const struct stacktab *t)
{
	return t->recycle && t->hold == 0 && t->queued > 0;
}

static void split_one(struct stacktab *t)
{
	uint32_t *from, *to;
	uint64_t bit;
	if (!linhash_split(&t->index, &from, &to, &bit))
		return;
	uint32_t *keep = from, *move = to;
	uint32_t i = *from;
	while (i) {
		struct stack_entry *e = stacktab_get(t, i - 1);
		uint32_t next = e->next;
		if (e->hash & bit) {
			*move = i;
			move = &e->next;
		} else {
			*keep = i;
			keep = &e->next;
		}
		i = next;
	}
	*keep = 0;
	*move = 0;
}

int64_t stacktab_intern(struct stacktab *t, const uintptr_t *pcs, uint32_t depth)
{
	if (depth == 0 || depth > t->bt_max) {
		t->dropped_nomem++;
		return -1;
	}
	uint64_t h = stacktab_hash(pcs, depth);
	uint32_t *link = linhash_head(&t->index, h);
	while (*link) {
		struct stack_entry *e = stacktab_get(t, *link - 1);
		if (e->hash == h && e->depth == depth &&
		    memcmp(e->pcs, pcs, depth * sizeof *pcs) == 0) {
			if (e->queued)
				queue_remove(t, e, *link);
			return *link - 1;
		}
		link = &e->next;
	}
	/* a new stack: first free what the queue holds beyond the stacks in use */
	for (int k = 0; k < 2 && may_recycle(t) && t->queued > QUEUE_FLOOR &&
	                t->queued * 2 > t->ents.live; k++)
		recycle_oldest(t);
	if (t->cap && t->ents.live >= t->cap) {
		if (!may_recycle(t)) {
			t->dropped_full++;
			return -1;
		}
		recycle_oldest(t);
	}
	uintptr_t *block = pc_alloc(t, depth);
	uint32_t id1 = block ? recstore_alloc(&t->ents) : 0;
	if (!id1) {
		if (block)
			pc_free(t, block, depth);
		t->dropped_nomem++;
		return -1;
	}
	struct stack_entry *e = stacktab_get(t, id1 - 1);
	uint32_t gen = id1 <= t->ents.used && e->depth == 0 ? e->gen + 1 : 0;
	memset(e, 0, sizeof *e);
	e->gen = gen;
	e->hash = h;
	e->depth = depth;
	e->pcs = block;
	memcpy(block, pcs, depth * sizeof *pcs);
	/* recycling may have changed the chain: append at its end again */
	link = linhash_head(&t->index, h);
	while (*link)
		link = &stacktab_get(t, *link - 1)->next;
	*link = id1;
	if (t->ents.live * 2 > t->index.nbuckets * 3)
		split_one(t);
	return id1 - 1;
}
