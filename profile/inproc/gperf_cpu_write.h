/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gperf_cpu_write.h - writes a CPU profile (cpusrc.h) in gperftools' binary CPU profile format
 * (docs/cpuprofile-fileformat of gperftools; FORMATS.md section 12), which jeprof, perl pprof,
 * google-pprof and `go tool pprof` read: native 64-bit words, header 0, 3, 0, period in µs, 0;
 * one record per stack (count, depth, pcs); the trailer 0, 1, 0; then /proc/self/maps.
 *
 * Runs inside the host: no malloc, no stdio; a fixed buffer on the stack. Not a reader
 * (gperf_cpu_read.h). Not async-signal-safe (calls the source's callback).
 */
#ifndef HEAPTAP_PROFILE_GPERF_CPU_WRITE_H
#define HEAPTAP_PROFILE_GPERF_CPU_WRITE_H

#include "cpusrc.h"

/* Writes src to fd. 0 or the negative errno of a failed write. */
int gperf_cpu_write(const struct cpu_source *src, int fd);

#endif
