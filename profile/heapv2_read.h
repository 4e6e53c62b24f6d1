/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * heapv2_read.h - reads jemalloc's threaded heap profile text (`heap_v2/<R>`, also written by
 * heaptap's collector) into the profile model, with jeprof's semantics: per-line Poisson
 * unsampling, t* lines summed per stack, non-leaf frames minus 1, the memory map and heaptap's
 * "# heaptap:" metadata. The legacy `heap profile:` text is legacy_read.h's. CLI only.
 */
#ifndef HEAPTAP_PROFILE_HEAPV2_READ_H
#define HEAPTAP_PROFILE_HEAPV2_READ_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "textscan.h"

/*
 * Reads d[0..n) (leading '%' command lines and a "--- heap" marker allowed) into p, which
 * must be initialised and empty. Returns 0, or -1 with "<name>:<line>: <what>" in err (p then
 * holds what was read so far; the caller releases it). Never reads outside d.
 */
int heapv2_read(const uint8_t *d, size_t n, const char *name, struct profile *p, char *err, size_t errcap);

/* The same, continuing from ts whose current line (ts->line) is the "heap_v2/R" header. */
int heapv2_read_scan(struct textscan *ts, struct profile *p, char *err, size_t errcap);

/*
 * jeprof's AdjustSamples for v2 (Poisson) sampling, for one (objects, bytes) pair: with
 * avg = bytes/objects, both are multiplied by 1/(1-exp(-avg/R)). No change when objects == 0
 * or R == 0 (and, unlike perl, none when bytes == 0, where the factor would be infinite).
 */
void heapv2_read_unsample(double period, double *objs, double *bytes);

#endif
