/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * interpose_cxx.c - the exported C++ operator new/delete family of libheaptap.so (every
 * variant of the Itanium C++ ABI: new, new[], nothrow, align_val_t; delete/delete[] plain,
 * sized, aligned, nothrow), written in C. Each forwards to the next definition (real.c), so
 * std::bad_alloc, the new_handler and alignment stay the allocator's. Not the malloc family
 * (interpose.c) and not the slow paths (core.c).
 *
 * Counting rule, decided once per variant in real.c: a variant is counted here only when its
 * next definition lives in the same object as the next malloc. Then it is the allocator's
 * own operator new (jemalloc, tcmalloc, mimalloc), which allocates internally and never
 * reaches heaptap's malloc, so it gets malloc's treatment: the byte countdown fast path and,
 * on a sample, core_alloc_slow_with; its delete checks the sampled-pointer filter. Otherwise
 * (libstdc++'s operator new calls malloc, its delete calls free, through the PLT into
 * heaptap) the call is only forwarded and counted in the statistics, so each allocation is
 * sampled exactly once. The slow path allocates with the nothrow twin (C frames cannot
 * unwind a C++ exception safely) and, when it fails, calls the throwing one outside the
 * profiler, which runs the new_handler or throws. All functions live in heaptap_text, so a
 * captured stack starts in the caller.
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "core.h"
#include "livetab.h"
#include "real.h"
#include "sampzone.h"

#define EXPORT HEAPTAP_EXPORT


/* std::nothrow is an empty object; the real functions never read it. */
static const char nothrow_tag;

static inline void ensure_real(void)
{
	if (unlikely(!real_ready()))
		real_resolve();
}

/* No operator new below (a C program that dlopens C++ code): malloc's, with abort for
   the exception a C caller cannot throw. */
HEAPTAP_TEXT static void *fallback_new(size_t n, size_t align, int nothrow)
{
	void *p = NULL;
	if (align > sizeof(void *)) {
		if (posix_memalign(&p, align, n ? n : 1) != 0)
			p = NULL;
	} else {
		p = malloc(n ? n : 1);
	}
	if (!p && !nothrow) {
		static const char msg[] = "heaptap: operator new: out of memory (no real operator new to throw)\n";
		(void)!write(2, msg, sizeof msg - 1);
		abort();
	}
	return p;
}

/* ---- the nothrow allocations the slow path makes ---- */

HEAPTAP_TEXT static void *slow_new(size_t n, size_t al)
{
	(void)al;
	return ((void *(*)(size_t, const void *))real_cxx.fn[RCXX_NEW_NT])(n, &nothrow_tag);
}

HEAPTAP_TEXT static void *slow_new_arr(size_t n, size_t al)
{
	(void)al;
	return ((void *(*)(size_t, const void *))real_cxx.fn[RCXX_NEW_ARR_NT])(n, &nothrow_tag);
}

HEAPTAP_TEXT static void *slow_new_al(size_t n, size_t al)
{
	return ((void *(*)(size_t, size_t, const void *))real_cxx.fn[RCXX_NEW_AL_NT])(n, al, &nothrow_tag);
}

HEAPTAP_TEXT static void *slow_new_arr_al(size_t n, size_t al)
{
	return ((void *(*)(size_t, size_t, const void *))real_cxx.fn[RCXX_NEW_ARR_AL_NT])(n, al, &nothrow_tag);
}

/*
 * The common body of the counted case: the fast path (core_fast_take) forwards to `call`; the
 * slow path samples through `slow` (nothrow).
 */
#define NEW_COUNTED(n, align, call, slow)                                \
	do {                                                             \
		if (core_fast_take(FN_NEW, (n)))                         \
			return call;                                     \
		void *p_ = core_alloc_slow_with(FN_NEW, (n), (align), slow); \
		if (p_)                                                  \
			return p_;                                       \
	} while (0)

/* ---- throwing new ---- */

HEAPTAP_TEXT static void *new_throwing(enum real_cxx id, size_t n,
                                       void *(*slow)(size_t, size_t))
{
	ensure_real();
	void *(*f)(size_t) = (void *(*)(size_t))real_cxx.fn[id];
	if (unlikely(!f))
		return fallback_new(n, 0, 0);
	if (real_cxx.counts[id])
		NEW_COUNTED(n, 0, f(n), slow);
	else
		tstate_tls.calls[FN_NEW]++;
	return f(n);
}

HEAPTAP_TEXT EXPORT void *_Znwm(size_t n)
{
	return new_throwing(RCXX_NEW, n, slow_new);
}

HEAPTAP_TEXT EXPORT void *_Znam(size_t n)
{
	return new_throwing(RCXX_NEW_ARR, n, slow_new_arr);
}

HEAPTAP_TEXT static void *new_al_throwing(enum real_cxx id, size_t n, size_t al,
                                          void *(*slow)(size_t, size_t))
{
	ensure_real();
	void *(*f)(size_t, size_t) = (void *(*)(size_t, size_t))real_cxx.fn[id];
	if (unlikely(!f))
		return fallback_new(n, al, 0);
	if (real_cxx.counts[id])
		NEW_COUNTED(n, al, f(n, al), slow);
	else
		tstate_tls.calls[FN_NEW]++;
	return f(n, al);
}

HEAPTAP_TEXT EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t al)
{
	return new_al_throwing(RCXX_NEW_AL, n, al, slow_new_al);
}

HEAPTAP_TEXT EXPORT void *_ZnamSt11align_val_t(size_t n, size_t al)
{
	return new_al_throwing(RCXX_NEW_ARR_AL, n, al, slow_new_arr_al);
}

/* ---- nothrow new ---- */

HEAPTAP_TEXT static void *new_nothrow(enum real_cxx id, size_t n, const void *tag,
                                      void *(*slow)(size_t, size_t))
{
	ensure_real();
	void *(*f)(size_t, const void *) = (void *(*)(size_t, const void *))real_cxx.fn[id];
	if (unlikely(!f))
		return fallback_new(n, 0, 1);
	if (real_cxx.counts[id]) {
		NEW_COUNTED(n, 0, f(n, tag), slow);
		return NULL; /* the slow path's nothrow allocation failed */
	}
	tstate_tls.calls[FN_NEW]++;
	return f(n, tag);
}

HEAPTAP_TEXT EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *tag)
{
	return new_nothrow(RCXX_NEW_NT, n, tag, slow_new);
}

HEAPTAP_TEXT EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *tag)
{
	return new_nothrow(RCXX_NEW_ARR_NT, n, tag, slow_new_arr);
}

HEAPTAP_TEXT static void *new_al_nothrow(enum real_cxx id, size_t n, size_t al,
                                         const void *tag, void *(*slow)(size_t, size_t))
{
	ensure_real();
	void *(*f)(size_t, size_t, const void *) = (void *(*)(size_t, size_t, const void *))real_cxx.fn[id];
	if (unlikely(!f))
		return fallback_new(n, al, 1);
	if (real_cxx.counts[id]) {
		NEW_COUNTED(n, al, f(n, al, tag), slow);
		return NULL;
	}
	tstate_tls.calls[FN_NEW]++;
	return f(n, al, tag);
}

HEAPTAP_TEXT EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al,
                                                             const void *tag)
{
	return new_al_nothrow(RCXX_NEW_AL_NT, n, al, tag, slow_new_al);
}

HEAPTAP_TEXT EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al,
                                                             const void *tag)
{
	return new_al_nothrow(RCXX_NEW_ARR_AL_NT, n, al, tag, slow_new_arr_al);
}

/* ---- delete ---- */

/*
 * Common head of every delete: counts the call and, when this variant is counted here, drops
 * a sampled block from the tables. 0 when the block must not reach the real delete (NULL,
 * a bootstrap pool block) or there is no real delete (then it is freed here).
 */
HEAPTAP_TEXT static int delete_head(enum real_cxx id, void *p)
{
	ensure_real();
	tstate_tls.calls[FN_DELETE]++;
	if (unlikely(!real_cxx.fn[id])) {
		free(p);
		return 0;
	}
	if (unlikely((uintptr_t)p - real.zone_base < SAMPZONE_SIZE)) {
		/* a zone block (from malloc: only malloc's samples go to the zone) */
		free(p);
		return 0;
	}
	if (real_cxx.counts[id] && livetab_maybe_sampled(p)) {
		if (!p || real_pool_owns(p))
			return 0;
		core_forget_slow(p);
	}
	return 1;
}


HEAPTAP_TEXT EXPORT void _ZdlPv(void *p)
{
	if (delete_head(RCXX_DEL, p))
		((void (*)(void *))real_cxx.fn[RCXX_DEL])(p);
}

HEAPTAP_TEXT EXPORT void _ZdaPv(void *p)
{
	if (delete_head(RCXX_DEL_ARR, p))
		((void (*)(void *))real_cxx.fn[RCXX_DEL_ARR])(p);
}

HEAPTAP_TEXT EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *tag)
{
	if (delete_head(RCXX_DEL_NT, p))
		((void (*)(void *, const void *))real_cxx.fn[RCXX_DEL_NT])(p, tag);
}

HEAPTAP_TEXT EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *tag)
{
	if (delete_head(RCXX_DEL_ARR_NT, p))
		((void (*)(void *, const void *))real_cxx.fn[RCXX_DEL_ARR_NT])(p, tag);
}

HEAPTAP_TEXT EXPORT void _ZdlPvm(void *p, size_t n)
{
	if (delete_head(RCXX_DEL_SZ, p))
		((void (*)(void *, size_t))real_cxx.fn[RCXX_DEL_SZ])(p, n);
}

HEAPTAP_TEXT EXPORT void _ZdaPvm(void *p, size_t n)
{
	if (delete_head(RCXX_DEL_ARR_SZ, p))
		((void (*)(void *, size_t))real_cxx.fn[RCXX_DEL_ARR_SZ])(p, n);
}

HEAPTAP_TEXT EXPORT void _ZdlPvSt11align_val_t(void *p, size_t al)
{
	if (delete_head(RCXX_DEL_AL, p))
		((void (*)(void *, size_t))real_cxx.fn[RCXX_DEL_AL])(p, al);
}

HEAPTAP_TEXT EXPORT void _ZdaPvSt11align_val_t(void *p, size_t al)
{
	if (delete_head(RCXX_DEL_ARR_AL, p))
		((void (*)(void *, size_t))real_cxx.fn[RCXX_DEL_ARR_AL])(p, al);
}

HEAPTAP_TEXT EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al,
                                                              const void *tag)
{
	if (delete_head(RCXX_DEL_AL_NT, p))
		((void (*)(void *, size_t, const void *))real_cxx.fn[RCXX_DEL_AL_NT])(p, al, tag);
}

HEAPTAP_TEXT EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al,
                                                              const void *tag)
{
	if (delete_head(RCXX_DEL_ARR_AL_NT, p))
		((void (*)(void *, size_t, const void *))real_cxx.fn[RCXX_DEL_ARR_AL_NT])(p, al, tag);
}

HEAPTAP_TEXT EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al)
{
	if (delete_head(RCXX_DEL_SZ_AL, p))
		((void (*)(void *, size_t, size_t))real_cxx.fn[RCXX_DEL_SZ_AL])(p, n, al);
}

HEAPTAP_TEXT EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al)
{
	if (delete_head(RCXX_DEL_ARR_SZ_AL, p))
		((void (*)(void *, size_t, size_t))real_cxx.fn[RCXX_DEL_ARR_SZ_AL])(p, n, al);
}
