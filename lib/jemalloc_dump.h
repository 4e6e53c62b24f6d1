/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * jemalloc_dump.h - a snapshot of the program's own jemalloc profiler as the stacks of a
 * dump_source (profile/inproc/dumpsrc.h), so every dump heaptap writes (heap_v2, pprof, legacy; to
 * files under prof_prefix, to HTTP replies, at exit) can come from jemalloc when it is the
 * backend (backend.h): jemalloc's prof.dump is written into the run directory, the file is
 * parsed (heap_v2), unbiased as jeprof would, and the allocator frames that lead each stack
 * (jemalloc's own functions, Rust's allocator shims: jemalloc_backend_is_machinery) are
 * dropped, so the first frame is the program's.
 *
 * Not the mallctl wrappers (jemalloc_backend.h) and not a writer. No host malloc: the file is
 * mmap'd, stacks and frames live in anonymous mappings reused across dumps. Not thread-safe:
 * dump.c calls it under the dump lock. Not async-signal-safe.
 */
#ifndef HEAPTAP_LIB_JEMALLOC_DUMP_H
#define HEAPTAP_LIB_JEMALLOC_DUMP_H

#include <stdint.h>

#include "../profile/inproc/dumpsrc.h"

/* Asks jemalloc for a dump and loads it. Returns 0 (*period holds the file's sample period,
   *accum 1 when jemalloc keeps cumulative counts) or -errno (-ENOENT: jemalloc's profiler is
   not usable; -EPROTO: the file is not heap_v2). */
int jemalloc_dump_take(uint64_t *period, int *accum);

/* The dump_source walk over the loaded snapshot (dumpsrc.h's for_each_stack contract). */
int jemalloc_dump_for_each(const struct dump_source *src,
                           int (*fn)(void *ctx, const struct dump_stack *st), void *ctx);

/* Parses heap_v2 text (len bytes) into the snapshot, trimming with is_machinery (NULL: no
   trimming). Returns 0 or -errno. Exposed for the unit test. */
int jemalloc_dump_parse(const char *text, size_t len, int (*is_machinery)(uintptr_t pc),
                        uint64_t *period);

#endif
