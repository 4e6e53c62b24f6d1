/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpu_pprof_write.h - writes a CPU profile (cpusrc.h) as a pprof profile.proto in the shape Go's
 * runtime gives /debug/pprof/profile: sample types samples/count and cpu/nanoseconds, period
 * type cpu/nanoseconds with the sampling period, time and duration of the window, mappings
 * with build IDs, and what was lost as comments ("heaptap: lost_buffer_full=N", ...).
 *
 * The protobuf is gzipped on the way out with the collector's own deflate (base/deflate.h), as
 * Go's runtime sends it. Locations carry mapping and address
 * only (the leaf's exact pc, callers' return address - 1). Runs inside the host: no malloc,
 * no stdio; scratch memory from mmap. Not async-signal-safe. Not the heap writer
 * (pprof_write.h).
 */
#ifndef HEAPTAP_PROFILE_CPU_PPROF_WRITE_H
#define HEAPTAP_PROFILE_CPU_PPROF_WRITE_H

#include "cpusrc.h"

/* Writes src to fd. 0, -ENOMEM, or the negative errno of a failed write. */
int cpu_pprof_write(const struct cpu_source *src, int fd);

#endif
