/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sampler.c - PRNG and exponential intervals of sampler.h. No allocation, no shared state,
 * no libm: the logarithm is computed here from the double's bits and a short series, so a
 * sample reads no lookup table (libm's log made ~3 cold cache-line loads per sample). Not
 * the tables and not the unbiasing (profile/inproc/unbias.c).
 */
#include "sampler.h"

#include <string.h>
#include <time.h>

void sampler_seed(uint64_t *state, uint64_t salt)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t s = salt ^ ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec;
	*state = s ? s : 0x9e3779b97f4a7c15ull;
	(void)sampler_next(state);
}

uint64_t sampler_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * -ln(u) for u in (0, 1]. u = m * 2^e with m in [sqrt(1/2), sqrt(2)), and
 * ln(m) = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...) with s = (m - 1)/(m + 1), |s| < 0.1716:
 * s^2 < 0.0295, so the terms up to s^17 leave a relative error below 1e-13 (an interval of
 * 2^40 bytes is then off by < 0.1 byte). The series in z = s^2 is evaluated in Estrin's form,
 * four multiply-add levels deep instead of Horner's nine.
 */
double sampler_neg_log(double u)
{
	uint64_t bits;
	memcpy(&bits, &u, sizeof bits);
	int e = (int)((bits >> 52) & 0x7ff) - 1023; /* u is normal: u >= 2^-53 */
	bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull; /* m in [1, 2) */
	double m;
	memcpy(&m, &bits, sizeof m);
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	double s = (m - 1.0) / (m + 1.0);
	double z = s * s, z2 = z * z, z4 = z2 * z2;
	double q = (1.0 + z * (1.0 / 3)) + z2 * (1.0 / 5 + z * (1.0 / 7)) +
	           z4 * ((1.0 / 9 + z * (1.0 / 11)) + z2 * (1.0 / 13 + z * (1.0 / 15))) +
	           z4 * z4 * (1.0 / 17);
	return -((double)e * 0.6931471805599453 + 2.0 * s * q);
}

uint64_t sampler_interval(uint64_t *state, uint64_t period)
{
	if (period <= 1)
		return 1;
	/* u in (0, 1]: 53 random bits, +1 so that ln(u) is finite */
	double u = (double)((sampler_next(state) >> 11) + 1) * (1.0 / 9007199254740992.0);
	double x = sampler_neg_log(u) * (double)period;
	if (!(x >= 1.0))
		return 1;
	if (x >= 9.2e18)
		return (uint64_t)9200000000000000000ull;
	uint64_t n = (uint64_t)x; /* ceil */
	return (double)n < x ? n + 1 : n;
}
