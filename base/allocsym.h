/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * allocsym.h - recognising allocators by the symbols of an ELF file: jemalloc's control API
 * under whatever prefix the build gave it (mallctl, je_mallctl, _rjem_mallctl, ...), the
 * markers of other allocators a program may carry privately (tcmalloc, mimalloc), and the
 * (mangled) names of allocator machinery whose frames lead a jemalloc stack: jemalloc's own
 * functions and Rust's global-allocator shims.
 *
 * Shared by the collector (which finds and drives a program's own jemalloc) and the CLI
 * (`heaptap run` sets the right *MALLOC_CONF before it starts a program). Pure functions over
 * mapped files and strings: no heap, no global state, no stdio. Not a demangler.
 */
#ifndef HEAPTAP_BASE_ALLOCSYM_H
#define HEAPTAP_BASE_ALLOCSYM_H

#include <stddef.h>
#include <stdint.h>

#include "elffile.h"

#define ALLOCSYM_PREFIX_MAX 32

/* What one file's symbol tables say about the allocators linked into it. */
struct allocsym_found {
	/* jemalloc: found when <prefix>mallctl and <prefix>mallctlnametomib are functions here */
	int jemalloc;
	char je_prefix[ALLOCSYM_PREFIX_MAX];    /* "", "je_", "_rjem_", ... */
	uint64_t je_mallctl;                     /* link-time addresses (st_value) */
	uint64_t je_stats_print;                 /* <prefix>malloc_stats_print, 0 when absent */
	int je_exported;                         /* 1 when found in .dynsym */
	/* another allocator's marker function ("tc_malloc", "mi_malloc", ...), "" when none */
	char other[32];
	const char *other_name;                  /* "tcmalloc", "mimalloc" (static strings) */
};

/* Scans f's .dynsym, then .symtab. Returns 1 when anything was found, else 0. */
int allocsym_scan(const struct elffile *f, struct allocsym_found *out);

/* The environment variable jemalloc built with `prefix` reads its options from: the prefix
   upper-cased, then "MALLOC_CONF" ("_RJEM_MALLOC_CONF", "MALLOC_CONF"). Returns its length,
   0 when it does not fit in cap. */
size_t allocsym_conf_var(const char *prefix, char *out, size_t cap);

/* 1 when a (mangled or plain) function name is allocator machinery that leads a jemalloc
   stack: jemalloc's functions (names starting with je_prefix, je_, __je_, or its out-of-line
   inline helpers: imalloc_body, prof_backtrace_impl, ...), the malloc family, and Rust's
   global allocator (__rust_alloc*, __rdl_*, __rg_*, alloc::alloc, alloc::raw_vec, the
   GlobalAlloc impls, tikv_jemallocator) in legacy and v0 mangling. */
int allocsym_is_machinery(const char *name, const char *je_prefix);

/* 1 when name, up to its first '.' (a compiler's .constprop.0 / .isra.0 suffix), is one of
   jemalloc's internal functions that keep a bare name in a build (static inline helpers left
   out of line). */
int allocsym_is_jemalloc_internal(const char *name);

#endif
