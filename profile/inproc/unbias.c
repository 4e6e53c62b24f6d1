/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unbias.c - sampling weights and the heap_v2 pre-compensation of unbias.h. Only libm's
 * exp/expm1 and plain arithmetic: usable inside the host. Not a sampler and not a writer.
 */
#include "unbias.h"

#include <math.h>

double unbias_weight(uint64_t nbytes, uint64_t period)
{
	if (period <= 1)
		return 1.0;
	double s = nbytes ? (double)nbytes : 1.0;
	double x = s / (double)period;
	if (x < 0.5) {
		/*
		 * The objects of nearly every sample: 1 / (1 - e^-x) = 1/x + 1/2 + sum over k >= 1
		 * of B(2k) x^(2k-1) / (2k)! (Bernoulli numbers). For x < 1/2 each term is under
		 * (x / 2 pi)^2 < 0.0064 of the one before, so the terms up to x^9 leave a relative
		 * error below 1e-13. No libm call: expm1's tables cost ~3 cache misses a sample.
		 */
		double z = x * x;
		double t = 1.0 / 47900160;
		t = t * z - 1.0 / 1209600;
		t = t * z + 1.0 / 30240;
		t = t * z - 1.0 / 720;
		t = t * z + 1.0 / 12;
		return 1.0 / x + 0.5 + x * t;
	}
	/* -expm1(-x) = 1 - exp(-x) */
	double p = -expm1(-x);
	if (!(p > 0))
		return (double)period; /* underflow cannot happen for s >= 1, but stay finite */
	return 1.0 / p;
}

void unbias_precompensate(double objs, double nbytes, uint64_t period,
                          uint64_t *pobjs, uint64_t *pbytes)
{
	*pobjs = 0;
	*pbytes = 0;
	if (!(objs > 0) || !(nbytes > 0))
		return;
	if (period == 0) { /* not sampled: jeprof scales nothing */
		*pobjs = (uint64_t)llround(objs);
		*pbytes = (uint64_t)llround(nbytes);
		return;
	}
	double x = nbytes / objs;
	double y = nbytes * -expm1(-x / (double)period);
	*pbytes = (uint64_t)llround(y);
	*pobjs = (uint64_t)llround(y / x);
	/* jeprof leaves a pair with 0 objects unscaled: never print one half of a pair */
	if (*pbytes == 0 || *pobjs == 0)
		*pbytes = *pobjs = 0;
}

void unbias_jeprof(double objs, double nbytes, uint64_t period, double *pobjs, double *pbytes)
{
	*pobjs = objs;
	*pbytes = nbytes;
	if (objs == 0 || period == 0)
		return;
	double avg = nbytes / objs;
	double factor = 1.0 / (1.0 - exp(-avg / (double)period));
	*pobjs = objs * factor;
	*pbytes = nbytes * factor;
}
