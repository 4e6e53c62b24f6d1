/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * report_slowleak.c - the program the series-report and flame graph tests profile: one function
 * (leak_slowly) leaks 16 KiB every tick, two others (keep_flat_a, keep_flat_b) hold a fixed pool
 * and keep replacing its blocks, so their live memory stays flat while they allocate as much.
 * It checks nothing itself; the tests read the dumps a profiler writes while it runs.
 *
 * Usage: report_slowleak [SECONDS [TICK_MS]]   (default 3 s, 16 ms ticks: ~1 MiB/s leaked,
 * ~2 MiB/s and ~1 MiB/s churned by the flat functions, 2 MiB and 1 MiB held by them)
 *
 * The flat pools are made of 64 KiB blocks so that, sampled every 16 KiB (lg_prof_sample:14),
 * each block is in a profile with probability 1 - e^-4 = 0.98: their estimates move by a
 * standard deviation of only ~50 KiB (pool a) and ~35 KiB (pool b) from dump to dump, far below
 * the report's noise floor (3 sqrt(peak R) = 543 / 384 KiB), while the leak's 16 KiB blocks rise
 * by ~3 MiB.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Keeps the call from becoming a tail call, so the function's frame stays on the stack. */
#define NO_TAIL() __asm__ volatile("" ::: "memory")

#define LEAK_BYTES (16 * 1024)
#define A_BLOCK (64 * 1024)
#define A_BLOCKS 32 /* 2 MiB */
#define B_BLOCK (64 * 1024)
#define B_BLOCKS 16 /* 1 MiB */

static void **leaked;
static size_t nleaked, capleaked;
static void *pool_a[A_BLOCKS], *pool_b[B_BLOCKS];

static void *touch(void *p, size_t n)
{
	if (!p) {
		fputs("report_slowleak: out of memory\n", stderr);
		exit(3);
	}
	memset(p, 0xa5, n);
	return p;
}

/* The leak: the blocks stay reachable from `leaked` but are never freed or used again. */
__attribute__((noinline)) static void leak_slowly(void)
{
	if (nleaked == capleaked) {
		capleaked = capleaked ? capleaked * 2 : 1024;
		leaked = realloc(leaked, capleaked * sizeof *leaked);
		if (!leaked)
			exit(3);
	}
	leaked[nleaked++] = touch(malloc(LEAK_BYTES), LEAK_BYTES);
	NO_TAIL();
}

__attribute__((noinline)) static void keep_flat_a(size_t i)
{
	free(pool_a[i % A_BLOCKS]);
	pool_a[i % A_BLOCKS] = touch(malloc(A_BLOCK), A_BLOCK);
	NO_TAIL();
}

__attribute__((noinline)) static void keep_flat_b(size_t i)
{
	free(pool_b[i % B_BLOCKS]);
	pool_b[i % B_BLOCKS] = touch(malloc(B_BLOCK), B_BLOCK);
	NO_TAIL();
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;
	long tick_ms = argc > 2 ? atol(argv[2]) : 16;
	if (!(seconds > 0) || tick_ms <= 0) {
		fputs("usage: report_slowleak [SECONDS [TICK_MS]]\n", stderr);
		return 2;
	}
	for (size_t i = 0; i < A_BLOCKS; i++)
		keep_flat_a(i);
	for (size_t i = 0; i < B_BLOCKS; i++)
		keep_flat_b(i);
	double t0 = now_s(), deadline = t0 + seconds;
	struct timespec tick = {tick_ms / 1000, (tick_ms % 1000) * 1000000L};
	for (size_t i = 0; now_s() < deadline; i++) {
		leak_slowly();
		if (i % 2 == 0) /* 64 KiB every other tick: ~2 MiB/s */
			keep_flat_a(i / 2 * 7);
		if (i % 4 == 0) /* every fourth: ~1 MiB/s */
			keep_flat_b(i / 4 * 5);
		nanosleep(&tick, NULL);
	}
	printf("leaked %zu bytes in %zu blocks\n", nleaked * (size_t)LEAK_BYTES, nleaked);
	return 0;
}
