/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * allocsym.c - the allocator recognition of allocsym.h. No heap, no global state.
 */
#include "allocsym.h"

#include <string.h>

static const char *const jemalloc_internal[] = {
	"imalloc", "imalloc_body", "imalloc_fastpath", "ialloc", "iallocztm", "ipalloc", "ipallocztm",
	"ialloc_prof", "ialloc_prof_sample", "irealloc_prof", "irealloc_prof_sample", "irallocx_prof",
	"irallocx_prof_sample", "ixallocx_prof", "ixalloc", "iralloc", "iralloct", "do_rallocx",
	"malloc_default", "prof_backtrace", "prof_backtrace_impl", "prof_unwind_callback",
	"prof_tctx_create", "prof_alloc_prep", "prof_malloc_sample_object", "prof_sample_check",
	"arena_malloc", "arena_malloc_hard", "arena_palloc", "tcache_alloc_small",
	"tcache_alloc_small_hard", "tcache_alloc_large", "large_malloc", "large_palloc", NULL,
};

int allocsym_is_jemalloc_internal(const char *name)
{
	size_t n = strcspn(name, ".");
	for (int i = 0; jemalloc_internal[i]; i++)
		if (strlen(jemalloc_internal[i]) == n && strncmp(name, jemalloc_internal[i], n) == 0)
			return 1;
	return 0;
}

/* Plain names of the allocation entry points (jemalloc's public API without a prefix). */
static const char *const entry_points[] = {
	"malloc", "calloc", "realloc", "free", "mallocx", "rallocx", "xallocx", "dallocx", "sdallocx",
	"posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc", NULL,
};

/* Substrings of Rust symbols, legacy (_ZN5alloc7raw_vec...) and v0 (_RNv...5alloc7raw_vec...)
   mangling alike: identifiers are written <length><name> in both. */
static const char *const rust_parts[] = {
	"__rust_alloc", "__rust_realloc", "__rust_dealloc", "__rdl_", "__rg_", "5alloc5alloc",
	"5alloc7raw_vec", "GlobalAlloc", "17tikv_jemallocator", "12jemallocator", NULL,
};

int allocsym_is_machinery(const char *name, const char *je_prefix)
{
	size_t pl = je_prefix ? strlen(je_prefix) : 0;
	if (pl && strncmp(name, je_prefix, pl) == 0)
		return 1;
	if (strncmp(name, "je_", 3) == 0 || strncmp(name, "__je_", 5) == 0 ||
	    allocsym_is_jemalloc_internal(name))
		return 1;
	for (int i = 0; entry_points[i]; i++)
		if (strcmp(name, entry_points[i]) == 0)
			return 1;
	for (int i = 0; rust_parts[i]; i++)
		if (strstr(name, rust_parts[i]))
			return 1;
	return 0;
}

size_t allocsym_conf_var(const char *prefix, char *out, size_t cap)
{
	size_t pl = strlen(prefix);
	if (pl + sizeof "MALLOC_CONF" > cap)
		return 0;
	for (size_t i = 0; i < pl; i++)
		out[i] = prefix[i] >= 'a' && prefix[i] <= 'z' ? (char)(prefix[i] - 32) : prefix[i];
	memcpy(out + pl, "MALLOC_CONF", sizeof "MALLOC_CONF");
	return pl + sizeof "MALLOC_CONF" - 1;
}

static int ends_with(const char *s, size_t n, const char *suffix, size_t sn)
{
	return n >= sn && memcmp(s + n - sn, suffix, sn) == 0;
}

/* 1 when the prefix p (n bytes) could be a jemalloc prefix: [A-Za-z0-9_]*. */
static int prefix_ok(const char *p, size_t n)
{
	if (n >= ALLOCSYM_PREFIX_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
			return 0;
	}
	return 1;
}

/* Looks for the function `prefix``base` in t; its st_value, or 0. */
static uint64_t find_func(const struct elffile_symtab *t, const char *prefix, size_t pl, const char *base)
{
	size_t bl = strlen(base);
	for (size_t i = 0; i < t->nsyms; i++) {
		if (!elffile_sym_is_func(t, i))
			continue;
		const char *s = t->strs + t->syms[i].st_name;
		if (strncmp(s, prefix, pl) == 0 && strncmp(s + pl, base, bl) == 0 && s[pl + bl] == 0)
			return t->syms[i].st_value;
	}
	return 0;
}

static const struct {
	const char *symbol, *allocator;
} others[] = {
	{"tc_malloc", "tcmalloc"},
	{"TCMallocInternalMalloc", "tcmalloc"},
	{"mi_malloc", "mimalloc"},
	{"rpmalloc", "rpmalloc"},
	{"snmalloc_malloc", "snmalloc"},
};

static void scan_table(const struct elffile_symtab *t, int dynamic, struct allocsym_found *out)
{
	static const char tail[] = "mallctlnametomib";
	const size_t tl = sizeof tail - 1;
	for (size_t i = 0; i < t->nsyms; i++) {
		if (!elffile_sym_is_func(t, i))
			continue;
		const char *s = t->strs + t->syms[i].st_name;
		size_t n = strnlen(s, t->nstrs - t->syms[i].st_name);
		if (!out->jemalloc && ends_with(s, n, tail, tl) && prefix_ok(s, n - tl)) {
			char prefix[ALLOCSYM_PREFIX_MAX];
			memcpy(prefix, s, n - tl);
			prefix[n - tl] = 0;
			uint64_t ctl = find_func(t, prefix, n - tl, "mallctl");
			if (ctl) {
				out->jemalloc = 1;
				memcpy(out->je_prefix, prefix, n - tl + 1);
				out->je_mallctl = ctl;
				out->je_stats_print = find_func(t, prefix, n - tl, "malloc_stats_print");
				out->je_exported = dynamic;
			}
		}
		if (!out->other[0])
			for (size_t k = 0; k < sizeof others / sizeof others[0]; k++)
				if (strcmp(s, others[k].symbol) == 0) {
					memcpy(out->other, s, strlen(s) + 1);
					out->other_name = others[k].allocator;
				}
	}
}

int allocsym_scan(const struct elffile *f, struct allocsym_found *out)
{
	memset(out, 0, sizeof *out);
	struct elffile_symtab t;
	if (elffile_symtab(f, SHT_DYNSYM, &t) == 0)
		scan_table(&t, 1, out);
	if ((!out->jemalloc || !out->other[0]) && elffile_symtab(f, SHT_SYMTAB, &t) == 0)
		scan_table(&t, 0, out);
	return out->jemalloc || out->other[0];
}
