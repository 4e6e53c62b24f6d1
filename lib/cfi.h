/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cfi.h - the collector's own DWARF call-frame unwinder for x86-64 samples: each return
 * address's frame rule (CFA = rsp or rbp + offset, return address at CFA - 8, the caller's
 * rbp saved at CFA + k or left alone) is read once from its object's .eh_frame and kept in a
 * global cache, so a warm capture costs a cache probe and one or two stack loads per frame.
 *
 * Signal frames (glibc's __restore_rt, marked 'S' in its CIE) are stepped through the kernel's
 * ucontext, and CFAs loaded from the stack (DW_OP_breg rsp/rbp, deref[, plus_uconst]: realigned
 * frames) are evaluated. A frame the rules cannot say (no unwind information: JIT code,
 * hand-written asm; another CFA register or expression) is stepped by its frame pointer when
 * rbp looks like one, else the walk ends there: a shorter stack, never a read outside the
 * thread's stack, and after such a guess none of an unmapped page (mincore). It is the collector's only unwinder besides the plain frame-pointer walk
 * (no libunwind: nothing opens descriptors or allocates behind the host's back). No malloc,
 * no stdio, no descriptors, no lock on the read side (dl_iterate_phdr's loader lock on a
 * rule miss before glibc 2.35, except in cfi_backtrace_context, which reads a table of the
 * loaded objects instead); cfi_backtrace is not async-signal-safe (neither is the sampling
 * path).
 */
#ifndef HEAPTAP_LIB_CFI_H
#define HEAPTAP_LIB_CFI_H

#include <stdint.h>

/* Maps the rule cache. dl_find_object is glibc's _dl_find_object (2.35 and later) found by
   the caller without linking it, or NULL (objects are then found with dl_iterate_phdr). 0,
   or -ENOMEM (then cfi_backtrace always answers 0). Call once at init, before any sample. */
int cfi_init(void *dl_find_object);

/*
 * Fills pcs[0..max) with return addresses, outermost last, starting from the frame at frame
 * address fp (NULL: cfi_backtrace's own), which must be a frame with a frame pointer (the
 * return address at fp + 8, the caller's rbp at fp, the CFA at fp + 16) still on this
 * thread's stack: pcs[0] is that frame's return address (after a signal frame, the
 * interrupted pc itself). Reads the stack only inside [stack_lo, stack_hi). Returns the depth,
 * or 0 when it cannot start (no rule cache, fp outside the stack: use the frame-pointer walk).
 * A capture that had to step some frame by its frame pointer or stop early is counted in
 * cfi_counts.fallbacks.
 */
uint32_t cfi_backtrace(uintptr_t *pcs, uint32_t max, const void *fp, uintptr_t stack_lo,
                       uintptr_t stack_hi);

/*
 * The same walk from an interrupted context (a signal handler's ucontext): pc is the exact
 * instruction address of the first frame (not a return address), sp and bp its rsp and rbp;
 * pcs[0] = pc. Reads the stack only inside [stack_lo, stack_hi) (and, after a frame-pointer
 * guess, pages mincore says are mapped), and sp must lie there. Returns the depth, or 0 when
 * the walk cannot start. Async-signal-safe: no lock, no allocation; the rule cache is read
 * lock-free, and a rule computed while another writer fills the cache is simply not cached.
 * The CPU profiler's signal handler uses it (lib/cpu_sampler.c).
 */
uint32_t cfi_backtrace_context(uintptr_t *pcs, uint32_t max, uintptr_t pc, uintptr_t sp,
                               uintptr_t bp, uintptr_t stack_lo, uintptr_t stack_hi);

/* Forgets every cached rule (after an object is unloaded: its addresses may be reused). */
void cfi_forget_all(void);

/* In a fork child: a thread of the parent may have been filling a cache slot; lets the child's
   threads write rules again. */
void cfi_fork_child(void);

/* The packed rule (kind in bits 0-1: 1 step, 2 outermost, 3 cannot) of the frame executing at
   pc, read from the .eh_frame_hdr at eh_frame_hdr of an object occupying [lo, hi): no read
   leaves that range, whatever the bytes. For the fuzzer and tests. */
uint64_t cfi_rule_for(const void *eh_frame_hdr, const void *lo, const void *hi, uintptr_t pc);

/* Counters for tests and statistics: captures that stepped a frame by its frame pointer, ended
   early or could not start; rule look-ups that parsed the CFI (cache misses); look-ups from an
   interrupted context whose pc was in no object of the object table (stepped by frame pointer). */
struct cfi_counts {
	uint64_t fallbacks, parses, objtab_misses;
};

/* The loaded objects' table that walks from an interrupted context (cfi_backtrace_context)
   use instead of dl_iterate_phdr, which is not async-signal-safe, where glibc has no
   _dl_find_object (before 2.35): rebuilt when dl_iterate_phdr's load/unload counters changed
   since the last call. Not async-signal-safe (it calls dl_iterate_phdr); call it outside
   handlers, before sampling starts and periodically while it runs. Returns 1 when rebuilt, 0
   when unchanged or not needed (_dl_find_object), -ENOMEM. */
int cfi_objects_refresh(void);
/* Tests: 1 makes walks from an interrupted context use the table even with _dl_find_object. */
void cfi_objects_force(int on);
void cfi_get_counts(struct cfi_counts *out);

#endif
