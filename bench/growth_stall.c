/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * growth_stall.c - benchmark program: how long the slowest allocation waits. Allocates N blocks
 * of 16 bytes (kept live, so a collector's live table grows from empty to N entries), timing
 * every malloc with the thread's CPU clock (so a preemption on a busy machine is not counted as a
 * stall; page faults are), and prints the median, 99.99th percentile and maximum in
 * nanoseconds. Run bare and under a profiler (bench/scale.sh): the profiler's longest pause
 * while its tables grow shows as the difference in the maximum. Not a test.
 *
 * Usage: growth_stall N
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	void **keep = malloc((size_t)n * sizeof *keep);
	uint32_t *lat = malloc((size_t)n * sizeof *lat);
	if (!keep || !lat)
		return 3;
	for (long i = 0; i < n; i++) { /* touch the arrays first: their faults are not malloc's */
		keep[i] = NULL;
		lat[i] = 0;
	}
	for (long i = 0; i < n; i++) {
		uint64_t t0 = now_ns();
		keep[i] = malloc(16);
		uint64_t t1 = now_ns();
		if (!keep[i])
			return 3;
		lat[i] = (uint32_t)(t1 - t0 > UINT32_MAX ? UINT32_MAX : t1 - t0);
	}
	qsort(lat, (size_t)n, sizeof *lat, cmp);
	printf("median_ns %u p9999_ns %u max_ns %u\n", lat[n / 2], lat[n - n / 10000 - 1], lat[n - 1]);
	return 0;
}
