/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memlimit.h - the heaptap CLI's memory cap: how much data memory (heap and anonymous
 * mappings, RLIMIT_DATA) one run may use, from --max-memory, HEAPTAP_MAX_MEMORY or the
 * default (4 GiB, or half the physical memory when that is less). Reaching it makes an
 * allocation fail, and the CLI then stops with "heaptap: FILE: out of memory (...)" and
 * exit status 1 (profile/arena.h, arena_oom), never with an abort.
 *
 * It is not an allocator and does not count allocations: the kernel enforces the cap. Builds
 * with AddressSanitizer or ThreadSanitizer (which reserve terabytes of shadow memory) set no
 * cap; the readers' own bounds (proportional to the input) still hold there. CLI only.
 */
#ifndef HEAPTAP_CLI_MEMLIMIT_H
#define HEAPTAP_CLI_MEMLIMIT_H

#include <stdint.h>

/* The default cap: 4 GiB, or half the physical memory when that is less (at least 256 MiB). */
uint64_t memlimit_default(void);

/* Parses a size: a decimal number with an optional K, M, G or T suffix (powers of 1024,
   an optional "iB"/"B" after it); "0", "none" or "unlimited" mean no cap (*out = 0). Returns 0,
   or -1 when s is not a size. */
int memlimit_parse(const char *s, uint64_t *out);

/* Sets the cap to nbytes (0: none, the limit the process started with). explicit_: the user
   asked for it (the cap may then go above the limit inherited from the shell, up to its hard
   limit); otherwise the inherited limit is kept when it is lower. Returns 0, or -1 when the
   kernel refused (the cap is then unchanged). */
int memlimit_set(uint64_t nbytes, int explicit_);

/* Applies HEAPTAP_MAX_MEMORY, or the default when it is unset or empty. Returns 0, or 2 after
   printing "heaptap: HEAPTAP_MAX_MEMORY: ..." when its value is not a size. Call once, first. */
int memlimit_init(void);

/* Gives back the limit the process started with: for a child about to exec another program
   (`heaptap run`'s PROG, Graphviz), which must not inherit heaptap's cap. Async-signal-safe. */
void memlimit_restore(void);

#endif
