/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fleet_host.c - a host program for the fleet tests (delta pulls, /metrics, push): it
 * allocates exactly what it is told, from known functions, when it is told. It reads
 * commands from stdin, one a line, and answers each with "ok <wall-clock ns>" on stdout
 * once done (the time lets a test tell which profile snapshots came after it):
 *   keep N SIZE    N blocks of SIZE bytes from keep_site(), kept live to the end
 *   churn N SIZE   N blocks of SIZE bytes from churn_site(), each freed at once
 *   paths N SIZE   N blocks of SIZE bytes, block i from path_site() under a call path of 14
 *                  path_a/path_b frames spelling i's low 14 bits (N <= 16384: N distinct
 *                  stacks), each freed at once (the stack table may recycle them)
 *   quit           exits 0 (also at the end of stdin)
 * It prints "ready <pid>" first. Not a benchmark; allocates nothing else after start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KEEP_MAX 100000

static void *kept[KEEP_MAX];
static size_t nkept;

__attribute__((noinline)) void *keep_site(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) void *churn_site(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) void *path_site(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

void *path_a(unsigned long bits, int left, size_t n);
void *path_b(unsigned long bits, int left, size_t n);

/* the next frame by bit `left`, then path_site: 2^14 distinct stacks */
static void *path_next(unsigned long bits, int left, size_t n)
{
	if (left == 0)
		return path_site(n);
	return (bits >> (left - 1)) & 1 ? path_b(bits, left - 1, n) : path_a(bits, left - 1, n);
}

__attribute__((noinline)) void *path_a(unsigned long bits, int left, size_t n)
{
	void *p = path_next(bits, left, n);
	__asm__ volatile("" : : "r"(p) : "memory"); /* no tail call: the frame stays */
	return p;
}

__attribute__((noinline)) void *path_b(unsigned long bits, int left, size_t n)
{
	void *p = path_next(bits, left, n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
	char line[256];
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %ld\n", (long)getpid());
	while (fgets(line, sizeof line, stdin)) {
		char cmd[16];
		unsigned long n = 0, size = 0;
		if (sscanf(line, "%15s %lu %lu", cmd, &n, &size) < 1)
			continue;
		if (strcmp(cmd, "quit") == 0)
			break;
		if (strcmp(cmd, "keep") == 0) {
			for (unsigned long i = 0; i < n && nkept < KEEP_MAX; i++)
				kept[nkept++] = keep_site(size);
		} else if (strcmp(cmd, "churn") == 0) {
			for (unsigned long i = 0; i < n; i++)
				free(churn_site(size));
		} else if (strcmp(cmd, "paths") == 0) {
			for (unsigned long i = 0; i < n; i++)
				free(path_a(i, 14, size));
		} else {
			printf("unknown %s\n", cmd);
			continue;
		}
		printf("ok %lld\n", now_ns());
	}
	return 0;
}
