/*
 * sampler.c - PRNG and exponential intervals of sampler.h. Uses libm's log; no allocation,
 * no shared state. Not the tables and not the unbiasing (profile/unbias.c).
 */
#include "sampler.h"

#include <math.h>
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

uint64_t sampler_interval(uint64_t *state, uint64_t period)
{
	if (period <= 1)
		return 1;
	/* u in (0, 1]: 53 random bits, +1 so that ln(u) is finite */
	double u = (double)((sampler_next(state) >> 11) + 1) * (1.0 / 9007199254740992.0);
	double x = ceil(-log(u) * (double)period);
	if (!(x >= 1.0))
		return 1;
	if (x >= 9.2e18)
		return (uint64_t)9200000000000000000ull;
	return (uint64_t)x;
}
