/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symtab.c - the address -> frames table of the analyzer (see symtab.h): an open-addressing
 * hash from lookup address to a dense array of prof_symbol, and an interning table so equal
 * strings share one copy in the table's arena. It resolves nothing itself (cli/sym does).
 */
#include "symtab.h"

#include <stdlib.h>
#include <string.h>

#include "../base/hash.h"
#include "arena.h"

/* A hash slot carries its address, so a probe touches the slot array only. */
struct slot {
	uint64_t addr;
	uint32_t idx; /* index into syms + 1; 0 = empty */
};

struct prof_symtab {
	struct arena arena;
	struct prof_symbol *syms; /* dense, in insertion order */
	size_t n, cap;
	struct slot *slots; /* open addressing on addr */
	size_t mask;
	const char **strs; /* interned strings; NULL = empty */
	uint64_t *str_hashes;
	size_t smask, scount;
};

struct prof_symtab *symtab_new(void)
{
	struct prof_symtab *t = arena_xcalloc(1, sizeof *t);
	arena_init(&t->arena);
	t->mask = 63;
	t->slots = arena_xcalloc(t->mask + 1, sizeof *t->slots);
	t->smask = 255;
	t->strs = arena_xcalloc(t->smask + 1, sizeof *t->strs);
	t->str_hashes = arena_xcalloc(t->smask + 1, sizeof *t->str_hashes);
	return t;
}

void symtab_free(struct prof_symtab *t)
{
	if (!t)
		return;
	arena_release(&t->arena);
	free(t->syms);
	free(t->slots);
	free(t->strs);
	free(t->str_hashes);
	free(t);
}

static size_t symtab_slot(const struct prof_symtab *t, uint64_t addr)
{
	size_t j = hash_mix64(addr) & t->mask;
	while (t->slots[j].idx && t->slots[j].addr != addr)
		j = (j + 1) & t->mask;
	return j;
}

const struct prof_symbol *symtab_get(const struct prof_symtab *t, uint64_t addr)
{
	if (!t)
		return NULL;
	size_t j = symtab_slot(t, addr);
	return t->slots[j].idx ? &t->syms[t->slots[j].idx - 1] : NULL;
}

static void symtab_grow(struct prof_symtab *t)
{
	size_t n = (t->mask + 1) * 2;
	free(t->slots);
	t->slots = arena_xcalloc(n, sizeof *t->slots);
	t->mask = n - 1;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = symtab_slot(t, t->syms[i].addr);
		t->slots[j] = (struct slot){t->syms[i].addr, (uint32_t)(i + 1)};
	}
}

static const char *symtab_intern_n(struct prof_symtab *t, const char *s, size_t n)
{
	uint64_t h = hash_bytes(s, n);
	size_t j = h & t->smask;
	while (t->strs[j]) {
		if (t->str_hashes[j] == h && strncmp(t->strs[j], s, n) == 0 && t->strs[j][n] == '\0')
			return t->strs[j];
		j = (j + 1) & t->smask;
	}
	const char *copy = arena_strndup(&t->arena, s, n);
	t->strs[j] = copy;
	t->str_hashes[j] = h;
	if (++t->scount * 2 > t->smask + 1) {
		size_t cap = (t->smask + 1) * 2;
		const char **strs = arena_xcalloc(cap, sizeof *strs);
		uint64_t *hashes = arena_xcalloc(cap, sizeof *hashes);
		for (size_t i = 0; i <= t->smask; i++) {
			if (!t->strs[i])
				continue;
			size_t k = t->str_hashes[i] & (cap - 1);
			while (strs[k])
				k = (k + 1) & (cap - 1);
			strs[k] = t->strs[i];
			hashes[k] = t->str_hashes[i];
		}
		free(t->strs);
		free(t->str_hashes);
		t->strs = strs;
		t->str_hashes = hashes;
		t->smask = cap - 1;
	}
	return copy;
}

const char *symtab_intern(struct prof_symtab *t, const char *s)
{
	if (!s)
		return NULL;
	return symtab_intern_n(t, s, strlen(s));
}

void symtab_put(struct prof_symtab *t, uint64_t addr, const struct prof_frame *frames, uint32_t nframes,
                const char *module)
{
	size_t j = symtab_slot(t, addr);
	struct prof_symbol *sym;
	if (t->slots[j].idx) {
		sym = &t->syms[t->slots[j].idx - 1];
	} else {
		if (t->n == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 256;
			t->syms = arena_xrealloc(t->syms, t->cap * sizeof *t->syms);
		}
		sym = &t->syms[t->n++];
		sym->addr = addr; /* before growing: the rehash reads it */
		t->slots[j] = (struct slot){addr, (uint32_t)t->n};
		if (t->n * 2 > t->mask + 1)
			symtab_grow(t);
	}
	sym->nframes = nframes;
	sym->frames = nframes ? arena_alloc(&t->arena, nframes * sizeof *sym->frames) : NULL;
	for (uint32_t i = 0; i < nframes; i++) {
		sym->frames[i].func = symtab_intern(t, frames[i].func);
		sym->frames[i].file = symtab_intern(t, frames[i].file);
		sym->frames[i].line = frames[i].line;
	}
	sym->module = symtab_intern(t, module);
}

size_t symtab_count(const struct prof_symtab *t)
{
	return t ? t->n : 0;
}

const struct prof_symbol *symtab_at(const struct prof_symtab *t, size_t i)
{
	return &t->syms[i];
}

void symtab_merge(struct prof_symtab *dst, const struct prof_symtab *src)
{
	if (!src || src == dst)
		return;
	for (size_t i = 0; i < src->n; i++) {
		const struct prof_symbol *s = &src->syms[i];
		if (!symtab_get(dst, s->addr))
			symtab_put(dst, s->addr, s->frames, s->nframes, s->module);
	}
}
