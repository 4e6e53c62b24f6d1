/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * perf_noleak.c - test program for the prof_leak summary: allocates and frees blocks through
 * malloc, calloc, realloc and posix_memalign without stdio (whose buffer would stay live),
 * and with an argument KEEP keeps KEEP blocks of 1 KiB until exit. Not a benchmark.
 *
 * Usage: perf_noleak [KEEP]
 */
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	long keep = argc > 1 ? atol(argv[1]) : 0;
	for (int i = 0; i < 1000; i++) {
		char *p = malloc((size_t)(16 + i));
		char *q = calloc(4, (size_t)(8 + i));
		void *a = NULL;
		if (!p || !q || posix_memalign(&a, 64, 256) != 0)
			return 3;
		memset(p, 1, 16);
		char *r = realloc(p, (size_t)(4096 + i));
		if (!r)
			return 3;
		free(r);
		free(q);
		free(a);
	}
	for (long i = 0; i < keep; i++) {
		volatile char *k = malloc(1024);
		if (!k)
			return 3;
		k[0] = 1; /* leaked on purpose */
	}
	return 0;
}
