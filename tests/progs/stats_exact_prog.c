/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stats_exact_prog.c - test program for the collector's stats_exact option: allocates known
 * blocks (malloc, calloc, realloc, posix_memalign, aligned_alloc, a large mmap'd one), frees
 * half of them, and prints its own malloc_usable_size sums next to heaptap_stats_json taken
 * through dlsym at three points. Not a test by itself: tests/preload/stats_exact.sh compares.
 *
 * Output lines: "BASE <json>", "A <json>", "B <json>", then "EXP alloc=.. freed_a=.. freed_b=.."
 * (usable bytes this program allocated / had freed by point A / by point B). Nothing between
 * BASE and B allocates except the blocks counted (output goes through write(2) from static
 * buffers). The odd-numbered blocks are left allocated at exit, for the final dump.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NBLK 40

static char json[3][64 * 1024];
static void *blk[NBLK];
static size_t usable[NBLK];

static void put(const char *s)
{
	size_t n = strlen(s);
	while (n) {
		ssize_t w = write(1, s, n);
		if (w <= 0)
			exit(3);
		s += w;
		n -= (size_t)w;
	}
}

int main(void)
{
	long (*stats)(char *, size_t) = (long (*)(char *, size_t))dlsym(RTLD_DEFAULT,
	                                                               "heaptap_stats_json");
	if (!stats) {
		put("no heaptap_stats_json\n");
		return 2;
	}
	if (stats(json[0], sizeof json[0]) <= 0)
		return 2;
	unsigned long long alloc = 0, freed_a = 0, freed_b = 0;
	for (int i = 0; i < NBLK; i++) {
		size_t n = (size_t)(i * 977 % 5000) + 1;
		void *p = NULL;
		switch (i % 6) {
		case 0: p = malloc(n); break;
		case 1: p = calloc(3, n); break;
		case 2:
			p = malloc(n / 2 + 1);
			if (p) {
				size_t u0 = malloc_usable_size(p);
				void *q = realloc(p, n * 4);
				if (!q)
					return 2;
				alloc += u0;   /* the first block, */
				freed_a += u0; /* taken back by realloc */
				p = q;
			}
			break;
		case 3:
			if (posix_memalign(&p, 64, n))
				p = NULL;
			break;
		case 4: p = aligned_alloc(256, (n + 255) & ~(size_t)255); break;
		default: p = malloc(i == 5 ? 300000 : n); break; /* one mmap'd chunk */
		}
		if (!p)
			return 2;
		memset(p, 1, 8);
		blk[i] = p;
		usable[i] = malloc_usable_size(p);
		alloc += usable[i];
	}
	if (stats(json[1], sizeof json[1]) <= 0)
		return 2;
	freed_b = freed_a;
	for (int i = 0; i < NBLK; i += 2) {
		freed_b += usable[i];
		free(blk[i]);
	}
	if (stats(json[2], sizeof json[2]) <= 0)
		return 2;
	char line[256];
	put("BASE ");
	put(json[0]);
	put("\nA ");
	put(json[1]);
	put("\nB ");
	put(json[2]);
	snprintf(line, sizeof line, "\nEXP alloc=%llu freed_a=%llu freed_b=%llu\n", alloc, freed_a,
	         freed_b);
	put(line);
	return 0; /* the odd blocks stay live for the final dump */
}
