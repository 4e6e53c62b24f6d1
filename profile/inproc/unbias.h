/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unbias.h - the sampling math shared by the collector and the analyzer: the weight of one
 * sampled object, jemalloc's pre-compensation of (count, bytes) pairs for heap_v2 files, and
 * jeprof's inverse formula that readers apply.
 *
 * Pure functions of their arguments: no allocation, no locks, no global state, so they are
 * async-signal-safe and run inside the host. Not the sampler itself (lib/sampler.c draws the
 * intervals) and not any file format.
 */
#ifndef HEAPTAP_PROFILE_UNBIAS_H
#define HEAPTAP_PROFILE_UNBIAS_H

#include <stdint.h>

/*
 * Weight of one sampled object of size nbytes under mean sampling period period (bytes):
 * 1 / (1 - exp(-nbytes/period)), the number of allocations of that size it stands for.
 * period <= 1 means every allocation was sampled: the weight is exactly 1.
 */
double unbias_weight(uint64_t nbytes, uint64_t period);

/*
 * jemalloc's pre-compensation (FORMATS.md §1.4.2): given the UNBIASED totals of one line
 * (objs, nbytes), returns in *pobjs / *pbytes the integers to print in a heap_v2/<period>
 * file so that jeprof's AdjustSamples maps them back to (objs, nbytes) within rounding.
 * Period 1 (every allocation sampled) is no exception: jeprof still divides a line by
 * 1 - exp(-avg size), so small objects are pre-compensated too. With period 0 the exact
 * rounded totals are returned. Both 0 when objs or nbytes is <= 0
 * or when either would round to 0.
 */
void unbias_precompensate(double objs, double nbytes, uint64_t period,
                          uint64_t *pobjs, uint64_t *pbytes);

/*
 * jeprof's AdjustSamples for heap_v2 (FORMATS.md §1.4.1): scales one printed pair
 * (objs, nbytes) to the unbiased pair it stands for. Unchanged when objs is 0 or period 0.
 */
void unbias_jeprof(double objs, double nbytes, uint64_t period, double *pobjs, double *pbytes);

#endif
