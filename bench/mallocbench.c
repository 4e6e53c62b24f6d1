/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mallocbench.c - a malloc-heavy, multi-threaded workload for bench/overhead.sh: each thread
 * keeps a working set of slots and replaces random ones with objects of mixed sizes (mostly
 * small, some up to 64 KiB, a few of 1 MiB), grows some with realloc, and hands objects to the
 * other threads through shared exchange slots so they are freed by a thread that did not
 * allocate them. It measures nothing itself beyond its own wall time; it is not a test.
 *
 * Usage: mallocbench [-t THREADS] [-n OPS_PER_THREAD] [-w WORKING_SET] [-r ROUNDS]  (mixed workload;
 *        with -r, the workload runs ROUNDS times in the process and the fastest round is
 *        reported: on a shared machine the best of several is steadier than one run)
 *        mallocbench -L MIB     (keeps MIB MiB live in 4..64 KiB objects, touched, then exits)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NEXCHANGE 4096

static _Atomic(void *) exchange[NEXCHANGE];
static long nthreads = 4, nops = 1000000, wset = 2048;

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Size mix: 70% 16..256 B, 25% 256 B..8 KiB, 4.9% 8..64 KiB, 0.1% 1 MiB. */
static size_t pick_size(uint64_t r)
{
	unsigned bucket = (unsigned)(r % 1000);
	r >>= 10;
	if (bucket < 700)
		return 16 + r % 241;
	if (bucket < 950)
		return 256 + r % (8192 - 256);
	if (bucket < 999)
		return 8192 + r % (65536 - 8192);
	return 1u << 20;
}

static void *worker(void *arg)
{
	uint64_t s = 0x9e3779b97f4a7c15ull * ((uint64_t)(uintptr_t)arg + 1);
	void **slots = calloc((size_t)wset, sizeof *slots);
	if (!slots)
		abort();
	uint64_t sum = 0;
	for (long i = 0; i < nops; i++) {
		uint64_t r = rng_next(&s);
		size_t k = (size_t)(r % (uint64_t)wset);
		unsigned action = (unsigned)((r >> 32) % 100);
		if (action < 8 && slots[k]) {
			/* Grow an object in place or by moving it. */
			void *p = realloc(slots[k], pick_size(rng_next(&s)) * 2);
			if (!p)
				abort();
			slots[k] = p;
		} else if (action < 20 && slots[k]) {
			/* Hand it to whichever thread takes this exchange slot next; free what was there. */
			void *old = atomic_exchange(&exchange[(r >> 16) % NEXCHANGE], slots[k]);
			free(old);
			slots[k] = NULL;
		} else {
			free(slots[k]);
			size_t n = pick_size(rng_next(&s));
			slots[k] = malloc(n);
			if (!slots[k])
				abort();
			((volatile char *)slots[k])[0] = (char)i;
			sum += n;
		}
	}
	for (long k = 0; k < wset; k++)
		free(slots[k]);
	free(slots);
	return (void *)(uintptr_t)sum;
}

static int live_heap(long mib)
{
	size_t total = (size_t)mib << 20, have = 0, n = 0, cap = total / 4096 + 16;
	void **v = malloc(cap * sizeof *v);
	uint64_t s = 12345;
	if (!v)
		return 1;
	while (have < total && n < cap) {
		size_t sz = 4096 + (rng_next(&s) % 15) * 4096;
		v[n] = malloc(sz);
		if (!v[n])
			return 1;
		memset(v[n], 1, sz);
		have += sz;
		n++;
	}
	printf("live %zu bytes in %zu objects\n", have, n);
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return 0;
}

int main(int argc, char **argv)
{
	int c;
	long live_mib = 0, rounds = 1;
	while ((c = getopt(argc, argv, "t:n:w:L:r:")) != -1) {
		switch (c) {
		case 't': nthreads = atol(optarg); break;
		case 'n': nops = atol(optarg); break;
		case 'w': wset = atol(optarg); break;
		case 'L': live_mib = atol(optarg); break;
		case 'r': rounds = atol(optarg); break;
		default:
			fprintf(stderr, "usage: mallocbench [-t THREADS] [-n OPS] [-w WORKING_SET] [-r ROUNDS] | -L MIB\n");
			return 2;
		}
	}
	if (live_mib > 0)
		return live_heap(live_mib);
	if (nthreads < 1 || nthreads > 256 || nops < 1 || wset < 1 || rounds < 1)
		return 2;
	double best = 0;
	uint64_t bytes = 0;
	for (long r = 0; r < rounds; r++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		pthread_t th[256];
		for (long i = 0; i < nthreads; i++)
			if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i) != 0)
				return 3;
		bytes = 0;
		for (long i = 0; i < nthreads; i++) {
			void *ret;
			pthread_join(th[i], &ret);
			bytes += (uint64_t)(uintptr_t)ret;
		}
		for (int i = 0; i < NEXCHANGE; i++)
			free(atomic_exchange(&exchange[i], NULL));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double sec = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (r == 0 || sec < best)
			best = sec;
	}
	printf("%ld threads x %ld ops: %.4f s, %.1f Mops/s, %.1f MiB allocated\n", nthreads, nops, best,
	       (double)(nthreads * nops) / best / 1e6, (double)bytes / 1048576.0);
	return 0;
}
