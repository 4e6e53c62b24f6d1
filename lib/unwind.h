/*
 * unwind.h - captures the calling thread's stack for a sample: libunwind's local-only
 * unw_backtrace (DWARF CFI, correct without frame pointers) or a bounded frame-pointer walk,
 * then strips the profiler's own leading frames (section heaptap_text) and libstdc++'s
 * operator new/new[] so pcs[0] is the return address into the user's code.
 *
 * Must be called with the thread's reentrancy depth raised (libunwind may allocate on its
 * first use) and without collector locks held. Not async-signal-safe.
 */
#ifndef HEAPTAP_LIB_UNWIND_H
#define HEAPTAP_LIB_UNWIND_H

#include <stdint.h>

/* Looks up the address ranges of operator new & co in every loaded object's dynamic symbol
   table (read in memory: no dlsym, no allocation). Call once at init. */
void unwind_init(void);

/* Fills pcs[0..max) leaf first; returns the depth after stripping (>= 1 unless nothing
   could be unwound, then 0). mode is enum unwind_mode (options.h). */
uint32_t unwind_capture(uintptr_t *pcs, uint32_t max, int mode);

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
