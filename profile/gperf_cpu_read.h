/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gperf_cpu_read.h - reads gperftools' binary CPU profile (what CPUPROFILE, heaptap's
 * /pprof/profile and gperf_cpu_write.h write; 64-bit little-endian words) into the model: each
 * record's count becomes samples (PV_INUSE_OBJS) and count * period CPU nanoseconds
 * (PV_INUSE_BYTES), the profile is marked cpu, and the /proc/self/maps text after the trailer
 * gives the mappings. Callers' addresses get jeprof's -1 (FixCallerAddresses), the leaf not.
 * CLI only (allocates). Not the writer.
 */
#ifndef HEAPTAP_PROFILE_GPERF_CPU_READ_H
#define HEAPTAP_PROFILE_GPERF_CPU_READ_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* 1 when d[0..n) starts with the header words 0, 3, 0. */
int gperf_cpu_read_sniff(const uint8_t *d, size_t n);

/* Reads d[0..n) into p (empty). 0, or -1 with a message in err. */
int gperf_cpu_read(const uint8_t *d, size_t n, const char *name, struct profile *p, char *err,
                   size_t errcap);

#endif
