/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sampler.h - the sampling decision's random part: a per-thread PRNG and the exponential
 * byte intervals between samples (FORMATS.md §8.5, continuous variant).
 *
 * An interval is ceil(-R * ln(u)) with u uniform in (0, 1], so with "sample the allocation
 * of size s when s >= bytes left" an allocation of s bytes is sampled with probability exactly
 * 1 - exp(-s/R) and the countdown stays memoryless; unbias_weight() inverts that. R = 1
 * samples every allocation. Pure functions over caller-owned state: async-signal-safe, no
 * allocation. Not the countdown itself (core.c) nor the weights (profile/inproc/unbias.h).
 */
#ifndef HEAPTAP_LIB_SAMPLER_H
#define HEAPTAP_LIB_SAMPLER_H

#include <stdint.h>

/* Seeds *state from a value mixed with the clock (never leaves it 0). */
void sampler_seed(uint64_t *state, uint64_t salt);

/* Next 64-bit pseudo-random number (splitmix64). */
uint64_t sampler_next(uint64_t *state);

/* -ln(u) for u in (0, 1] (relative error < 1e-13), without libm: no tables, no cache misses. */
double sampler_neg_log(double u);

/* Bytes until the next sample for mean period R (>= 1); always >= 1. */
uint64_t sampler_interval(uint64_t *state, uint64_t period);

#endif
