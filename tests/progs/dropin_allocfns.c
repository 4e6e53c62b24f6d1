/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dropin_allocfns.c - a program whose own functions carry the names of allocator machinery:
 * jemalloc's private functions with tikv-jemallocator's prefix (_rjem_je_prof_backtrace,
 * _rjem_je_malloc_default, _rjem_malloc) and a plain build's (je_prof_tctx_create, imalloc),
 * Rust's global-allocator shims (__rust_alloc, __rust_alloc_zeroed, __rust_realloc,
 * __rdl_alloc, __rg_alloc, and by their mangled names alloc::raw_vec::finish_grow,
 * alloc::alloc::realloc and <tikv_jemallocator::Jemalloc as core::alloc::global::GlobalAlloc>::alloc)
 * and operator new (_Znwm). Four app_* functions allocate through chains of them, so a
 * profile of this program shows what the CLI's trimming must remove: the flat column should
 * name app_build_index, app_cache_fill, app_new_session and app_grow.
 *
 * It is neither jemalloc nor Rust: every chain ends in the C library's malloc (or realloc).
 * Usage: dropin_allocfns [print]   ("print" lists each site's bytes, live until exit)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINL __attribute__((noinline, used))
/* Keeps the call from becoming a tail call, so each frame stays on the stack. */
#define NO_TAIL() __asm__ volatile("" ::: "memory")

void *rust_finish_grow(size_t n) __asm__("_ZN5alloc7raw_vec11finish_grow17h0123456789abcdefE");
void *rust_global_alloc(size_t n)
	__asm__("_ZN80_$LT$tikv_jemallocator..Jemalloc$u20$as$u20$core..alloc..global..GlobalAlloc$GT$5alloc17hfedcba9876543210E");
void *rust_alloc_realloc(void *p, size_t n) __asm__("_ZN5alloc5alloc7realloc17h00112233445566aaE");
void *cxx_operator_new(unsigned long n) __asm__("_Znwm");

NOINL void *_rjem_je_prof_backtrace(size_t n) { void *p = malloc(n); NO_TAIL(); return p; }
NOINL void *_rjem_je_malloc_default(size_t n) { void *p = _rjem_je_prof_backtrace(n); NO_TAIL(); return p; }
NOINL void *_rjem_malloc(size_t n) { void *p = _rjem_je_malloc_default(n); NO_TAIL(); return p; }
NOINL void *rust_global_alloc(size_t n) { void *p = _rjem_malloc(n); NO_TAIL(); return p; }
NOINL void *__rust_alloc(size_t n) { void *p = rust_global_alloc(n); NO_TAIL(); return p; }
NOINL void *rust_finish_grow(size_t n) { void *p = __rust_alloc(n); NO_TAIL(); return p; }

NOINL void *je_prof_tctx_create(size_t n) { void *p = malloc(n); NO_TAIL(); return p; }
NOINL void *imalloc(size_t n) { void *p = je_prof_tctx_create(n); NO_TAIL(); return p; }
NOINL void *__rdl_alloc(size_t n) { void *p = imalloc(n); NO_TAIL(); return p; }
NOINL void *__rust_alloc_zeroed(size_t n) { void *p = __rdl_alloc(n); NO_TAIL(); if (p) memset(p, 0, n); return p; }

NOINL void *cxx_operator_new(unsigned long n) { void *p = _rjem_je_malloc_default(n); NO_TAIL(); return p; }

NOINL void *__rg_alloc(void *old, size_t n) { void *p = realloc(old, n); NO_TAIL(); return p; }
NOINL void *__rust_realloc(void *old, size_t n) { void *p = __rg_alloc(old, n); NO_TAIL(); return p; }
NOINL void *rust_alloc_realloc(void *old, size_t n) { void *p = __rust_realloc(old, n); NO_TAIL(); return p; }

static void *volatile keep[64];
static int nkeep;

/* 3 MiB in 3 blocks */
NOINL void app_build_index(void)
{
	for (int i = 0; i < 3; i++)
		keep[nkeep++] = rust_finish_grow(1 << 20);
	NO_TAIL();
}

/* 2 MiB in 4 blocks */
NOINL void app_cache_fill(void)
{
	for (int i = 0; i < 4; i++)
		keep[nkeep++] = __rust_alloc_zeroed(512 << 10);
	NO_TAIL();
}

/* 1 MiB in 8 blocks */
NOINL void app_new_session(void)
{
	for (int i = 0; i < 8; i++)
		keep[nkeep++] = cxx_operator_new(128 << 10);
	NO_TAIL();
}

/* 512 KiB in 1 block */
NOINL void app_grow(void)
{
	keep[nkeep++] = rust_alloc_realloc(NULL, 512 << 10);
	NO_TAIL();
}

int main(int argc, char **argv)
{
	app_build_index();
	app_cache_fill();
	app_new_session();
	app_grow();
	if (argc > 1 && strcmp(argv[1], "print") == 0)
		printf("app_build_index 3145728\napp_cache_fill 2097152\napp_new_session 1048576\napp_grow 524288\n");
	return 0;
}
