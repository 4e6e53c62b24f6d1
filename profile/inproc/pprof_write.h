/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pprof_write.h - writes a dump_source as a gzipped pprof profile.proto heap profile (the
 * shape Go's runtime writes: alloc_objects, alloc_space, inuse_objects, inuse_space;
 * period_type space/bytes), which `go tool pprof` reads as is.
 *
 * Runs inside the host: no malloc, no stdio, no locale. Its scratch memory (encoder buffer,
 * location hash, the gzip compressor's state: base/deflate.h, not zlib) comes from mmap and is
 * unmapped before it returns. Not async-signal-safe (it calls the
 * source's for_each_stack, which may lock); call it from the dump thread. The profile is
 * unsymbolized: locations carry mapping and address (return address - 1) only.
 */
#ifndef HEAPTAP_PROFILE_PPROF_WRITE_H
#define HEAPTAP_PROFILE_PPROF_WRITE_H

#include "dumpsrc.h"

/*
 * Writes the gzipped profile of src to fd (from its current position). Returns 0, -ENOMEM
 * when scratch memory cannot be mapped, or the negative errno of a failed write. On failure the bytes already written to fd are garbage.
 */
int pprof_write(const struct dump_source *src, int fd);

/* Test seam: when n > 0, the n-th scratch mmap from now on fails (then the seam disarms).
   Used by the unit tests to check the -ENOMEM paths; production code never calls it. */
void pprof_write_fail_mmap_after(int n);

#endif
