/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fastpath.c - micro-benchmark of the collector's fast paths: the cost of one malloc and of
 * one free of an unsampled small block, measured separately (a batch of mallocs, then a
 * batch of frees), best of several rounds. Run it with and without
 * LD_PRELOAD=build/libheaptap.so (bench/fastpath.sh interleaves the runs and prints the
 * ratio). Not a test: it prints numbers and checks nothing.
 *
 * Usage: fastpath [size] [rounds]     prints "malloc_ns=<x> free_ns=<y>"
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BATCH 4096

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? (size_t)atol(argv[1]) : 32;
	int rounds = argc > 2 ? atoi(argv[2]) : 400;
	static void *ptrs[BATCH];
	double best_m = 1e30, best_f = 1e30;
	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();
		for (int i = 0; i < BATCH; i++)
			ptrs[i] = malloc(size);
		double t1 = now_ns();
		for (int i = 0; i < BATCH; i++)
			free(ptrs[i]);
		double t2 = now_ns();
		/* per-call cost, keep the best round (least disturbed by the other engineers' jobs) */
		double m = (t1 - t0) / BATCH, f = (t2 - t1) / BATCH;
		if (m < best_m)
			best_m = m;
		if (f < best_f)
			best_f = f;
	}
	printf("malloc_ns=%.2f free_ns=%.2f\n", best_m, best_f);
	return 0;
}
