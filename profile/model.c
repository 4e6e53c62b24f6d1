/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * model.c - the analyzer's in-memory heap profile (see model.h): samples, mappings, the arena
 * that owns their strings and address arrays, and the hash-based merging of identical stacks.
 * It does not read or write any format and never runs inside the collector.
 */
#include "model.h"
#include "../base/bisect.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../base/hash.h"
#include "arena.h"
#include "symtab.h"

/* Open-addressing table from stack to sample index; see "hashing stacks" below. */
struct stack_index {
	uint64_t *slots; /* (hash >> 32) << 32 | (sample index + 1); 0 = empty */
	size_t mask, count;
};

/* What p->arena points to: the arena plus caches that are rebuilt when stale. */
struct profile_priv {
	struct arena arena;
	/* Index of samples[0..ix_n) by stack (see struct stack_index). */
	struct stack_index ix;
	size_t ix_n;
	uint64_t ix_fingerprint; /* of samples[] when indexed (see sample_fingerprint) */
	/* Mapping index sorted by start, valid while maps/nmaps are unchanged. */
	size_t *map_order;
	size_t map_order_n;
	const struct prof_mapping *map_order_base;
};

/* Created on first use, so an initialised or released profile owns no memory. */
static struct profile_priv *profile_priv(struct profile *p)
{
	if (!p->arena) {
		struct profile_priv *pv = arena_xcalloc(1, sizeof *pv);
		arena_init(&pv->arena);
		p->arena = pv;
	}
	return p->arena;
}

void profile_init(struct profile *p)
{
	memset(p, 0, sizeof *p);
}

void profile_release(struct profile *p)
{
	struct profile_priv *pv = p->arena;
	if (pv) {
		arena_release(&pv->arena);
		free(pv->map_order);
		free(pv->ix.slots);
		free(pv);
	}
	free(p->samples);
	free(p->maps);
	if (p->syms)
		symtab_free(p->syms);
	profile_init(p);
}

char *profile_strdup(struct profile *p, const char *s)
{
	return arena_strdup(&profile_priv(p)->arena, s ? s : "");
}

static struct prof_sample *profile_push(struct profile *p)
{
	if (p->nsamples == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->samples = arena_xrealloc(p->samples, p->cap * sizeof *p->samples);
	}
	return &p->samples[p->nsamples++];
}

void profile_add(struct profile *p, const uint64_t *addrs, uint32_t naddrs, const double v[PV_COUNT])
{
	static const uint64_t zero;
	if (naddrs == 0) {
		addrs = &zero;
		naddrs = 1;
	}
	struct prof_sample *s = profile_push(p);
	s->addrs = arena_memdup(&profile_priv(p)->arena, addrs, naddrs * sizeof *addrs);
	s->naddrs = naddrs;
	for (int k = 0; k < PV_COUNT; k++)
		s->v[k] = v[k];
	s->xfree = 0;
}

void profile_add_mapping(struct profile *p, uint64_t start, uint64_t limit, uint64_t offset, const char *path,
                         const char *build_id)
{
	if (p->nmaps == p->maps_cap) {
		p->maps_cap = p->maps_cap ? p->maps_cap * 2 : 16;
		p->maps = arena_xrealloc(p->maps, p->maps_cap * sizeof *p->maps);
	}
	struct prof_mapping *m = &p->maps[p->nmaps++];
	m->start = start;
	m->limit = limit;
	m->offset = offset;
	m->path = profile_strdup(p, path);
	m->build_id = NULL;
	m->unloaded = 0;
	if (build_id && *build_id) {
		m->build_id = profile_strdup(p, build_id);
		for (char *c = m->build_id; *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c = (char)(*c - 'A' + 'a');
	}
}

/* ---- hashing stacks ---- */

/* Four independent lanes so the multiplies overlap; stacks are usually 10-100 words. */
static uint64_t stack_hash(const uint64_t *a, uint32_t n)
{
	uint64_t h0 = 0x9e3779b97f4a7c15ULL ^ n, h1 = 0x7f4a7c159e3779b9ULL, h2 = 0x94d049bb133111ebULL,
	         h3 = 0xbf58476d1ce4e5b9ULL;
	uint32_t i = 0;
	for (; i + 4 <= n; i += 4) {
		h0 = (h0 ^ a[i]) * 0x100000001b3ULL;
		h1 = (h1 ^ a[i + 1]) * 0x100000001b3ULL;
		h2 = (h2 ^ a[i + 2]) * 0x100000001b3ULL;
		h3 = (h3 ^ a[i + 3]) * 0x100000001b3ULL;
	}
	for (; i < n; i++)
		h0 = (h0 ^ a[i]) * 0x100000001b3ULL;
	return hash_mix64(h0 ^ hash_mix64(h1) ^ (hash_mix64(h2) << 1) ^ (hash_mix64(h3) >> 1));
}

static int stack_equal(const struct prof_sample *x, const struct prof_sample *y)
{
	return x->naddrs == y->naddrs && memcmp(x->addrs, y->addrs, x->naddrs * sizeof *x->addrs) == 0;
}

/*
 * The stack index is kept in the profile between calls, so repeated merges into one profile
 * cost only the source's size. Slots hold 32 bits of the hash and the sample index; a hit is
 * confirmed by comparing the stacks. If a caller reorders or filters p->samples by hand the
 * fingerprint (the array, its length and a few sample pointers) changes and the index is rebuilt.
 */
static void stack_index_init(struct stack_index *ix, size_t expected)
{
	size_t n = 64;
	while (n < expected * 2)
		n <<= 1;
	ix->slots = arena_xcalloc(n, sizeof *ix->slots);
	ix->mask = n - 1;
	ix->count = 0;
}

static void stack_index_free(struct stack_index *ix)
{
	free(ix->slots);
	memset(ix, 0, sizeof *ix);
}

static void stack_index_grow(struct stack_index *ix, const struct prof_sample *samples)
{
	struct stack_index big;
	stack_index_init(&big, ix->mask + 1);
	for (size_t i = 0; i <= ix->mask; i++) {
		uint64_t e = ix->slots[i];
		if (!e)
			continue;
		const struct prof_sample *s = &samples[(uint32_t)e - 1];
		size_t j = stack_hash(s->addrs, s->naddrs) & big.mask;
		while (big.slots[j])
			j = (j + 1) & big.mask;
		big.slots[j] = e;
	}
	big.count = ix->count;
	stack_index_free(ix);
	*ix = big;
}

/* Looks s up among samples[0..n). Returns its index, or SIZE_MAX with *slot = the empty slot
   where it belongs. */
static size_t stack_index_lookup(const struct stack_index *ix, const struct prof_sample *samples, size_t n,
                                 const struct prof_sample *s, uint64_t h, size_t *slot)
{
	size_t j = h & ix->mask;
	uint64_t tag = h >> 32;
	for (uint64_t e; (e = ix->slots[j]) != 0; j = (j + 1) & ix->mask) {
		size_t k = (uint32_t)e - 1;
		if ((e >> 32) == tag && k < n && stack_equal(&samples[k], s))
			return k;
	}
	*slot = j;
	return SIZE_MAX;
}

static void stack_index_set(struct stack_index *ix, size_t slot, size_t idx, uint64_t h,
                            const struct prof_sample *samples)
{
	ix->slots[slot] = (h >> 32) << 32 | (uint32_t)(idx + 1);
	if (++ix->count * 2 > ix->mask + 1)
		stack_index_grow(ix, samples);
}

static uint64_t sample_fingerprint(const struct profile *p)
{
	uint64_t f = hash_mix64((uintptr_t)p->samples ^ p->nsamples);
	size_t step = p->nsamples / 64 + 1;
	for (size_t i = 0; i < p->nsamples; i += step)
		f = hash_mix64(f ^ (uintptr_t)p->samples[i].addrs ^ p->samples[i].naddrs);
	if (p->nsamples)
		f = hash_mix64(f ^ (uintptr_t)p->samples[p->nsamples - 1].addrs);
	return f;
}

static int sample_is_zero(const struct prof_sample *s)
{
	for (int k = 0; k < PV_COUNT; k++)
		if (s->v[k] != 0)
			return 0;
	return s->xfree == 0;
}

/* Merges identical stacks in place (keeping first-seen order), drops all-zero samples when
   drop_zero, and leaves a fresh index of the result in the profile. */
static void profile_compact_impl(struct profile *p, int drop_zero)
{
	struct profile_priv *pv = profile_priv(p);
	struct stack_index *ix = &pv->ix;
	stack_index_free(ix);
	stack_index_init(ix, p->nsamples);
	size_t out = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		struct prof_sample *s = &p->samples[i];
		uint64_t h = stack_hash(s->addrs, s->naddrs);
		size_t slot = 0;
		size_t k = stack_index_lookup(ix, p->samples, out, s, h, &slot);
		if (k == SIZE_MAX) {
			p->samples[out] = *s;
			out++;
			stack_index_set(ix, slot, out - 1, h, p->samples);
		} else {
			for (int v = 0; v < PV_COUNT; v++)
				p->samples[k].v[v] += s->v[v];
			p->samples[k].xfree += s->xfree;
		}
	}
	p->nsamples = out;
	if (drop_zero) {
		size_t w = 0;
		for (size_t i = 0; i < p->nsamples; i++)
			if (!sample_is_zero(&p->samples[i]))
				p->samples[w++] = p->samples[i];
		if (w != p->nsamples) { /* indexes moved: rebuild */
			p->nsamples = w;
			stack_index_free(ix);
			stack_index_init(ix, w);
			for (size_t i = 0; i < w; i++) {
				const struct prof_sample *s = &p->samples[i];
				uint64_t h = stack_hash(s->addrs, s->naddrs);
				size_t slot = 0;
				stack_index_lookup(ix, p->samples, i, s, h, &slot);
				stack_index_set(ix, slot, i, h, p->samples);
			}
		}
	}
	pv->ix_n = p->nsamples;
	pv->ix_fingerprint = sample_fingerprint(p);
}

int profile_loss_set(struct prof_losses *l, const char *key, size_t klen, const char *v)
{
	static const char *const names[] = {"samples", "dropped_samples", "dropped_bytes",
	                                    "truncated_samples", "truncated_bytes", "unwind_failed",
	                                    "recycled_stacks", "recycled_objs", "recycled_bytes"};
	uint64_t *fields[] = {&l->samples, &l->dropped_samples, &l->dropped_bytes,
	                      &l->truncated_samples, &l->truncated_bytes, &l->unwind_failed,
	                      &l->recycled_stacks, &l->recycled_objs, &l->recycled_bytes};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (strlen(names[i]) != klen || memcmp(names[i], key, klen) != 0)
			continue;
		char *end;
		errno = 0;
		unsigned long long x = strtoull(v, &end, 10);
		*fields[i] = errno || end == v ? 0 : (uint64_t)x;
		l->known = 1;
		return 1;
	}
	return 0;
}

void profile_compact(struct profile *p)
{
	profile_compact_impl(p, 1);
}

static int mapping_same(const struct prof_mapping *a, const struct prof_mapping *b)
{
	return a->start == b->start && a->limit == b->limit && a->offset == b->offset &&
	       strcmp(a->path, b->path) == 0;
}

static uint64_t mapping_hash(const struct prof_mapping *m)
{
	return hash_mix64(m->start ^ hash_mix64(m->limit ^ hash_mix64(m->offset)) ^ hash_str(m->path));
}

/* Adds the mappings of src that dst lacks, through a hash of dst's (profiles may carry
   hundreds of thousands of mappings: comparing every pair would take hours). */
static void merge_mappings(struct profile *dst, const struct profile *src)
{
	if (!src->nmaps)
		return;
	size_t cap = 64;
	while (cap < (dst->nmaps + src->nmaps) * 2)
		cap <<= 1;
	size_t *slots = arena_xcalloc(cap, sizeof *slots); /* dst index + 1, 0 empty */
	size_t ndst = dst->nmaps;
	for (size_t i = 0; i < ndst + src->nmaps; i++) {
		const struct prof_mapping *m = i < ndst ? &dst->maps[i] : &src->maps[i - ndst];
		size_t j = mapping_hash(m) & (cap - 1);
		while (slots[j] && !mapping_same(&dst->maps[slots[j] - 1], m))
			j = (j + 1) & (cap - 1);
		if (slots[j])
			continue; /* dst has it (or a duplicate of dst's own) */
		if (i >= ndst) {
			profile_add_mapping(dst, m->start, m->limit, m->offset, m->path, m->build_id);
			dst->maps[dst->nmaps - 1].unloaded = m->unloaded;
		}
		slots[j] = (i < ndst ? i : dst->nmaps - 1) + 1;
	}
	free(slots);
}

void profile_merge(struct profile *dst, const struct profile *src, double sign)
{
	struct profile_priv *pv = profile_priv(dst);
	if (sign > 0 && src->losses.known) { /* a merge keeps what every input lost */
		struct prof_losses *a = &dst->losses;
		const struct prof_losses *b = &src->losses;
		a->known = 1;
		a->samples += b->samples;
		a->dropped_samples += b->dropped_samples;
		a->dropped_bytes += b->dropped_bytes;
		a->truncated_samples += b->truncated_samples;
		a->truncated_bytes += b->truncated_bytes;
		a->unwind_failed += b->unwind_failed;
		a->recycled_stacks += b->recycled_stacks;
		a->recycled_objs += b->recycled_objs;
		a->recycled_bytes += b->recycled_bytes;
	}
	/* Samples appended with profile_add since the last compaction may repeat stacks. */
	if (pv->ix_n != dst->nsamples || !pv->ix.slots || pv->ix_fingerprint != sample_fingerprint(dst))
		profile_compact_impl(dst, 0);
	/*
	 * The table and dst's stacks are bigger than the caches, so each lookup would wait for up
	 * to three misses (slot, sample, addresses). A software pipeline overlaps them: sample
	 * i + 16 is hashed and its slot prefetched, the slot of i + 8 is read and its candidate
	 * sample prefetched, the addresses of i + 4's candidate are prefetched. Only prefetches
	 * are issued from the guesses; the real lookup below decides.
	 */
	enum { D1 = 16, D2 = 8, D3 = 4, RING = 32 };
	struct ahead {
		uint64_t h;
		size_t k;
	} ring[RING];
	const size_t n = src->nsamples;
	for (size_t j = 0; j < D1 + 1 && j < n; j++) {
		ring[j % RING].h = stack_hash(src->samples[j].addrs, src->samples[j].naddrs);
		ring[j % RING].k = SIZE_MAX;
	}
	size_t guess = 0;
	int guessing = 1, wrong = 0;
	for (size_t i = 0; i < n; i++) {
		const struct prof_sample *s = &src->samples[i];
		uint64_t h = ring[i % RING].h;
		if (i + D1 + 1 < n) {
			const struct prof_sample *t = &src->samples[i + D1 + 1];
			struct ahead *r = &ring[(i + D1 + 1) % RING];
			r->h = stack_hash(t->addrs, t->naddrs);
			r->k = SIZE_MAX;
		}
		if (i + D1 < n)
			__builtin_prefetch(&pv->ix.slots[ring[(i + D1) % RING].h & pv->ix.mask]);
		if (i + D2 < n) {
			struct ahead *r = &ring[(i + D2) % RING];
			uint64_t e = pv->ix.slots[r->h & pv->ix.mask];
			if (e && (e >> 32) == (r->h >> 32) && (uint32_t)e - 1 < dst->nsamples) {
				r->k = (uint32_t)e - 1;
				__builtin_prefetch(&dst->samples[r->k]);
			}
		}
		if (i + D3 < n) {
			size_t k3 = ring[(i + D3) % RING].k;
			if (k3 < dst->nsamples) { /* up to four cache lines: 32 frames */
				const struct prof_sample *c = &dst->samples[k3];
				for (uint32_t w = 0; w < c->naddrs && w < 32; w += 8)
					__builtin_prefetch(c->addrs + w);
			}
		}
		/* Dumps of one process list their stacks in much the same order: try the sample after
		   the last match before the table (a sequential read instead of a random one).
		   A wrong guess costs a cache miss, so guessing stops after 8 wrong ones in a row and
		   resumes when a lookup lands where the guess would have. */
		size_t slot = 0, k;
		if (guessing && guess < dst->nsamples && stack_equal(&dst->samples[guess], s))
			k = guess;
		else
			k = stack_index_lookup(&pv->ix, dst->samples, dst->nsamples, s, h, &slot);
		if (k != SIZE_MAX) {
			for (int v = 0; v < PV_COUNT; v++)
				dst->samples[k].v[v] += sign * s->v[v];
			dst->samples[k].xfree += sign * s->xfree;
			if (k == guess) {
				guessing = 1;
				wrong = 0;
			} else if (++wrong >= 8) {
				guessing = 0;
			}
			guess = k + 1;
			continue;
		}
		struct prof_sample *d = profile_push(dst);
		d->addrs = arena_memdup(&pv->arena, s->addrs, s->naddrs * sizeof *s->addrs);
		d->naddrs = s->naddrs;
		for (int v = 0; v < PV_COUNT; v++)
			d->v[v] = sign * s->v[v];
		d->xfree = sign * s->xfree;
		stack_index_set(&pv->ix, slot, dst->nsamples - 1, h, dst->samples);
	}
	pv->ix_n = dst->nsamples;
	pv->ix_fingerprint = sample_fingerprint(dst);

	merge_mappings(dst, src);
	if (src->has_alloc)
		dst->has_alloc = 1;
	if (!dst->period)
		dst->period = src->period;
	if (src->jemalloc_frames)
		dst->jemalloc_frames = 1;
	if (!dst->format && src->format)
		dst->format = profile_strdup(dst, src->format);
	if (!dst->exe_path && src->exe_path)
		dst->exe_path = profile_strdup(dst, src->exe_path);
	if (!dst->cmdline && src->cmdline)
		dst->cmdline = profile_strdup(dst, src->cmdline);
	if (!dst->pid)
		dst->pid = src->pid;
	if (src->time_ns > dst->time_ns)
		dst->time_ns = src->time_ns;
	if (src->syms) {
		if (!dst->syms)
			dst->syms = symtab_new();
		symtab_merge(dst->syms, src->syms);
	}
}

/* ---- mappings ---- */

static const struct prof_mapping *sort_base;
static int map_cmp(const void *a, const void *b)
{
	uint64_t x = sort_base[*(const size_t *)a].start, y = sort_base[*(const size_t *)b].start;
	return x < y ? -1 : x > y;
}

/* bisect key: the start of the i-th mapping in address order */
static uint64_t map_start_key(const void *ctx, size_t i)
{
	const struct profile *p = ctx;
	return p->maps[((const struct profile_priv *)p->arena)->map_order[i]].start;
}

const struct prof_mapping *profile_find_mapping(const struct profile *p, uint64_t addr)
{
	struct profile_priv *pv = p->arena;
	if (p->nmaps == 0)
		return NULL;
	if (!pv) { /* maps filled in by hand: no index */
		for (size_t i = 0; i < p->nmaps; i++)
			if (addr >= p->maps[i].start && addr < p->maps[i].limit)
				return &p->maps[i];
		return NULL;
	}
	if (pv->map_order_n != p->nmaps || pv->map_order_base != p->maps) {
		free(pv->map_order);
		pv->map_order = arena_xmalloc(p->nmaps * sizeof *pv->map_order);
		for (size_t i = 0; i < p->nmaps; i++)
			pv->map_order[i] = i;
		sort_base = p->maps;
		qsort(pv->map_order, p->nmaps, sizeof *pv->map_order, map_cmp);
		pv->map_order_n = p->nmaps;
		pv->map_order_base = p->maps;
	}
	/* Last mapping with start <= addr, then walk back over overlapping ones, preferring a
	   loaded mapping to an unloaded one. */
	size_t lo = bisect_count_le(p->nmaps, addr, map_start_key, p);
	const struct prof_mapping *best = NULL;
	for (size_t i = lo; i-- > 0;) {
		const struct prof_mapping *m = &p->maps[pv->map_order[i]];
		if (addr < m->limit && (!best || (best->unloaded && !m->unloaded)))
			best = m;
		if (best && !best->unloaded)
			break;
		if (lo - i > 64)
			break; /* bounded: overlaps are rare */
	}
	if (best)
		return best;
	/* Not found: also what a caller who reordered p->maps in place would see from a stale
	   index, so make sure with a scan when that is cheap (a real process has a few hundred
	   mappings; a hostile profile with a million would make every miss a million steps). */
	for (size_t i = 0; i < p->nmaps && p->nmaps <= 1024; i++) {
		const struct prof_mapping *m = &p->maps[i];
		if (addr >= m->start && addr < m->limit && (!best || (best->unloaded && !m->unloaded)))
			best = m;
	}
	return best;
}

double profile_total(const struct profile *p, int k)
{
	double t = 0;
	if (k < 0 || k >= PV_COUNT)
		return 0;
	for (size_t i = 0; i < p->nsamples; i++)
		t += p->samples[i].v[k];
	return t;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Inserts a (nonzero) into the open-addressing set; returns 1 when it was new. */
static int addr_set_insert(uint64_t *set, size_t mask, uint64_t a)
{
	size_t h = hash_mix64(a) & mask;
	while (set[h] && set[h] != a)
		h = (h + 1) & mask;
	if (set[h])
		return 0;
	set[h] = a;
	return 1;
}

uint64_t *profile_unique_addrs(const struct profile *p, size_t *n)
{
	/* Sized by the distinct addresses, not the total: stacks share most of their frames. */
	size_t cap = 1024, count = 0;
	uint64_t *set = arena_xcalloc(cap, sizeof *set);
	int has_zero = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		/* A set of 100,000s of addresses is bigger than the caches: start the loads first. */
		for (uint32_t j = 0; j < s->naddrs; j++)
			__builtin_prefetch(&set[hash_mix64(s->addrs[j]) & (cap - 1)]);
		for (uint32_t j = 0; j < s->naddrs; j++) {
			uint64_t a = s->addrs[j];
			if (a == 0) {
				has_zero = 1;
				continue;
			}
			if (!addr_set_insert(set, cap - 1, a))
				continue;
			if (++count * 2 > cap) {
				uint64_t *big = arena_xcalloc(cap * 2, sizeof *big);
				for (size_t k = 0; k < cap; k++)
					if (set[k])
						addr_set_insert(big, cap * 2 - 1, set[k]);
				free(set);
				set = big;
				cap *= 2;
			}
		}
	}
	uint64_t *out = arena_xmalloc((count + (size_t)has_zero) * sizeof *out);
	size_t w = 0;
	if (has_zero)
		out[w++] = 0;
	for (size_t i = 0; i < cap; i++)
		if (set[i])
			out[w++] = set[i];
	free(set);
	qsort(out, w, sizeof *out, u64_cmp);
	*n = w;
	return out;
}

int profile_meta_memory(struct profile *p, const char *key, size_t klen, const char *v)
{
	if (klen == 6 && memcmp(key, "reason", 6) == 0) {
		p->reason = profile_strdup(p, v);
		return 1;
	}
	if (klen < 8 || memcmp(key, "memory.", 7) != 0)
		return 0;
	key += 7;
	klen -= 7;
	p->mem.present = 1;
	if (klen == 9 && memcmp(key, "allocator", 9) == 0) {
		p->mem.allocator = profile_strdup(p, v);
		return 1;
	}
	for (int i = 0; i < MF_COUNT; i++) {
		const char *n = memfacts_name(i);
		if (strlen(n) == klen && memcmp(n, key, klen) == 0) {
			p->mem.v[i] = strtoull(v, NULL, 10);
			return 1;
		}
	}
	return 1; /* a figure of a later version: ignored */
}
