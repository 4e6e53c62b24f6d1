/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbolz.c - the in-process symbol look-up of symbolz.h: each loaded ELF file is mapped
 * read-only, its function symbols are copied into an mmap'd array sorted by address (our
 * own heap sort; glibc's qsort may call malloc), and look-ups are binary searches.
 *
 * It is not the CLI's symbolizer (cli/sym, libdw): only ELF symbol tables, nothing else.
 * All memory comes from mmap; the cache holds at most SYMZ_MAX_OBJS objects.
 */
#include "symbolz.h"
#include "../base/pages.h"
#include "../base/bisect.h"

#include "../base/elffile.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define SYMZ_MAX_OBJS 256
#define SYMZ_MAX_SEGS 1024
#define SYMZ_PATH_MAX 512

struct symz_sym {
	uint64_t addr;  /* link-time address (st_value) */
	uint64_t size;
	uint32_t name;  /* offset in the string table */
};

struct symz_obj {
	char path[SYMZ_PATH_MAX];
	uint64_t base;            /* dlpi_addr */
	dev_t dev;
	ino_t ino;
	struct elffile ef;        /* the mapped ELF file (closed when it has no symbols) */
	const char *strtab;
	size_t strtab_len;
	struct symz_sym *syms;    /* sorted by addr; mmap'd */
	size_t nsyms;
	size_t syms_map_len;
	int seen;                 /* present in the latest snapshot */
	int used;
};

struct symz_seg {
	uint64_t lo, hi;          /* runtime [lo, hi) of an executable PT_LOAD */
	struct symz_obj *obj;
};

static struct symz_obj objs[SYMZ_MAX_OBJS];
static struct symz_seg segs[SYMZ_MAX_SEGS];
static size_t nsegs;

static void obj_unload(struct symz_obj *o)
{
	elffile_close(&o->ef);
	if (o->syms)
		munmap(o->syms, o->syms_map_len);
	memset(o, 0, sizeof *o);
}

static void sift_down(struct symz_sym *a, size_t root, size_t n)
{
	for (;;) {
		size_t child = 2 * root + 1;
		if (child >= n)
			return;
		if (child + 1 < n && a[child + 1].addr > a[child].addr)
			child++;
		if (a[root].addr >= a[child].addr)
			return;
		struct symz_sym t = a[root];
		a[root] = a[child];
		a[child] = t;
		root = child;
	}
}

static void heap_sort(struct symz_sym *a, size_t n)
{
	if (n < 2)
		return;
	for (size_t i = n / 2; i-- > 0;)
		sift_down(a, i, n);
	for (size_t end = n - 1; end > 0; end--) {
		struct symz_sym t = a[0];
		a[0] = a[end];
		a[end] = t;
		sift_down(a, 0, end);
	}
}

/* Copies the function symbols of o's mapped file (.symtab, else .dynsym) into a sorted
   array. Returns 0 or -1. */
static int obj_read_symbols(struct symz_obj *o)
{
	struct elffile_symtab t;
	if (elffile_symtab(&o->ef, SHT_SYMTAB, &t) != 0 && elffile_symtab(&o->ef, SHT_DYNSYM, &t) != 0)
		return -1;
	size_t count = 0;
	for (size_t i = 0; i < t.nsyms; i++)
		count += elffile_sym_is_func(&t, i);
	if (count == 0)
		return -1;
	size_t len = (size_t)pages_round_up(count * sizeof(struct symz_sym));
	void *m = pages_map(len);
	if (!m)
		return -1;
	struct symz_sym *out = m;
	size_t k = 0;
	for (size_t i = 0; i < t.nsyms && k < count; i++) {
		if (!elffile_sym_is_func(&t, i))
			continue;
		out[k].addr = t.syms[i].st_value;
		out[k].size = t.syms[i].st_size;
		out[k].name = t.syms[i].st_name;
		k++;
	}
	heap_sort(out, k);
	o->syms = out;
	o->nsyms = k;
	o->syms_map_len = len;
	o->strtab = t.strs;
	o->strtab_len = t.nstrs;
	return 0;
}

static struct symz_obj *obj_find_or_load(const char *name, uint64_t base)
{
	const char *path = name && *name ? name : "/proc/self/exe";
	size_t pl = strlen(path);
	if (pl >= SYMZ_PATH_MAX)
		return NULL;
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	struct symz_obj *free_slot = NULL;
	for (int i = 0; i < SYMZ_MAX_OBJS; i++) {
		struct symz_obj *o = &objs[i];
		if (!o->used) {
			if (!free_slot)
				free_slot = o;
			continue;
		}
		if (o->base == base && o->dev == st.st_dev && o->ino == st.st_ino && strcmp(o->path, path) == 0)
			return o;
	}
	if (!free_slot)
		return NULL;
	struct symz_obj *o = free_slot;
	memcpy(o->path, path, pl + 1);
	o->base = base;
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	o->used = 1;
	/* a stripped or unreadable file keeps an empty entry, so it is not re-read on every request */
	if (elffile_open(&o->ef, path) == 0 && obj_read_symbols(o) != 0)
		elffile_close(&o->ef);
	return o;
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
	int *nobj = ctx;
	(void)size;
	if (info->dlpi_name && info->dlpi_name[0] == 0 && *nobj > 0)
		return 0; /* only the first unnamed object is the main program (the vdso has a name) */
	struct symz_obj *o = obj_find_or_load(info->dlpi_name, info->dlpi_addr);
	(*nobj)++;
	if (!o)
		return 0;
	o->seen = 1;
	if (!o->nsyms)
		return 0;
	for (int i = 0; i < info->dlpi_phnum && nsegs < SYMZ_MAX_SEGS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		segs[nsegs].lo = info->dlpi_addr + ph->p_vaddr;
		segs[nsegs].hi = segs[nsegs].lo + ph->p_memsz;
		segs[nsegs].obj = o;
		nsegs++;
	}
	return 0;
}

int symbolz_begin(void)
{
	int nobj = 0;
	for (int i = 0; i < SYMZ_MAX_OBJS; i++)
		objs[i].seen = 0;
	nsegs = 0;
	dl_iterate_phdr(phdr_cb, &nobj);
	/* drop objects that were unloaded since the last snapshot */
	for (int i = 0; i < SYMZ_MAX_OBJS; i++)
		if (objs[i].used && !objs[i].seen)
			obj_unload(&objs[i]);
	/* sort segments by start (few; insertion sort) */
	for (size_t i = 1; i < nsegs; i++) {
		struct symz_seg t = segs[i];
		size_t j = i;
		while (j > 0 && segs[j - 1].lo > t.lo) {
			segs[j] = segs[j - 1];
			j--;
		}
		segs[j] = t;
	}
	int with = 0;
	for (int i = 0; i < SYMZ_MAX_OBJS; i++)
		with += objs[i].used && objs[i].nsyms > 0;
	return with;
}

/* bisect key: segment i's start */
static uint64_t seg_lo(const void *ctx, size_t i)
{
	return ((const struct symz_seg *)ctx)[i].lo;
}

const char *symbolz_lookup(uintptr_t addr)
{
	size_t lo = bisect_count_le(nsegs, addr, seg_lo, segs);
	if (lo == 0 || addr >= segs[lo - 1].hi)
		return NULL;
	const struct symz_obj *o = segs[lo - 1].obj;
	uint64_t a = addr - o->base;
	/* the last symbol starting at or before a */
	size_t l = 0, h = o->nsyms;
	while (l < h) {
		size_t mid = l + (h - l) / 2;
		if (o->syms[mid].addr <= a)
			l = mid + 1;
		else
			h = mid;
	}
	if (l == 0)
		return NULL;
	/* among symbols at the same address prefer one whose size covers a */
	size_t best = l - 1;
	for (size_t i = l; i-- > 0 && o->syms[i].addr == o->syms[l - 1].addr;)
		if (o->syms[i].size > a - o->syms[i].addr) {
			best = i;
			break;
		}
	const struct symz_sym *s = &o->syms[best];
	if (s->size != 0 && a - s->addr >= s->size) {
		/* past its end: another symbol may cover it (nested), else unknown */
		for (size_t i = best; i-- > 0 && best - i < 64;)
			if (a - o->syms[i].addr < o->syms[i].size)
				return o->strtab + o->syms[i].name;
		return NULL;
	}
	return o->strtab + s->name;
}
