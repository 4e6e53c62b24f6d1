/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind.h - captures the calling thread's stack for a sample: DWARF CFI (cfi.c's cached
 * rules, correct without frame pointers, through signal frames, on by frame pointers where
 * code has no unwind information) or a bounded frame-pointer walk, then strips the
 * profiler's own leading frames (section heaptap_text) and libstdc++'s operator new/new[] so
 * pcs[0] is the return address into the user's code. Both walks are heaptap's own: no
 * libunwind, no allocation, no descriptors, no reads outside the thread's stack.
 *
 * Call it with the thread's reentrancy depth raised and without collector locks held. Not
 * async-signal-safe.
 */
#ifndef HEAPTAP_LIB_UNWIND_H
#define HEAPTAP_LIB_UNWIND_H

#include <stdint.h>

#include "options.h"

/* Looks up the address ranges of operator new & co in every loaded object's dynamic symbol
   table (read in memory: no dlsym, no allocation). Call once at init. */
void unwind_init(void);

/* Room for the profiler's own frames on top of the max user frames. */
enum { UNWIND_SLACK = 16, UNWIND_RAW_MAX = 256 + UNWIND_SLACK };

/* unwind_capture's out-of-line halves: the frame-pointer walk and cfi.c's walk (the
   frame-pointer walk when that cannot start) into raw[0..want) (return the depth), and the
   stripping of raw[0..n) into pcs[0..max) (returns the depth kept). */
uint32_t unwind_walk_fp(uintptr_t *raw, uint32_t want);
uint32_t unwind_walk_cfi(uintptr_t *raw, uint32_t want, const void *from);
uint32_t unwind_finish(uintptr_t *pcs, uint32_t max, const uintptr_t *raw, uint32_t n);

/* Fills pcs[0..max) leaf first; returns the depth after stripping (>= 1 unless nothing
   could be unwound, then 0). mode is enum unwind_mode (options.h). from, when not NULL, is the
   frame address (__builtin_frame_address(0)) of a profiler function still on the stack, built
   with frame pointers: the CFI walk starts at its caller and skips the frames in between.
   Inlined into its caller (which must itself be profiler code, section heaptap_text, so its
   frame is stripped): a frame fewer to step through (see docs/INTERNALS.md "Unwinding
   cost"). Uses ~2 KiB of the caller's stack. */
static inline __attribute__((always_inline)) uint32_t unwind_capture(uintptr_t *pcs, uint32_t max,
                                                                     int mode, const void *from)
{
	uintptr_t raw[UNWIND_RAW_MAX];
	uint32_t want = max + UNWIND_SLACK;
	if (want > UNWIND_RAW_MAX)
		want = UNWIND_RAW_MAX;
	uint32_t n = mode == UNWIND_FP ? unwind_walk_fp(raw, want) : unwind_walk_cfi(raw, want, from);
	return unwind_finish(pcs, max, raw, n);
}

/*
 * The stack of an interrupted context (a CPU sample: the ucontext's rip, rsp and rbp), into
 * pcs[0..max): pcs[0] = pc (exact), then return addresses. cfi.c's rules first; when they
 * cannot unwind every frame, *fell_back = 1 and a frame-pointer walk from bp (which misses the
 * caller of a leaf that keeps no frame). Nothing stripped. Async-signal-safe: no lock, no
 * allocation, no libunwind; reads only the thread's stack (or 8 MiB above an sp outside it).
 * Returns the depth (>= 1 when max >= 1).
 */
uint32_t unwind_walk_context(uintptr_t *pcs, uint32_t max, uintptr_t pc, uintptr_t sp,
                             uintptr_t bp, int *fell_back);

/* Looks the operator new ranges up again if objects were loaded since the last look-up (a
   libstdc++ that a dlopen'ed plugin brought in with RTLD_LOCAL). It reads the objects'
   dynamic sections, which are only complete outside the loader, so it is not called from a
   sample (that may be taken inside dlopen): dump.c calls it before each snapshot. */
void unwind_refresh(void);

/* Number of leading frames of pcs[0..depth) that unwind_is_internal (keeps at least one):
   applied again at dump time, with ranges refreshed since the capture. */
uint32_t unwind_strip(const uintptr_t *pcs, uint32_t depth);

/* 1 if pc lies in the profiler's own code or in an operator new variant. */
int unwind_is_internal(uintptr_t pc);

#endif
