/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * perf_churn.c - test program for the fast-path instruction budget: N rounds of malloc(32)
 * then free of the same block, nothing else, so the difference of two runs with different N
 * is the cost of N malloc/free pairs. With a second argument, each round also frees NULL
 * (legal and common: C++ deletes of null pointers, cleanup paths), so the difference to a run
 * without it is the cost of N free(NULL). Not a timing benchmark (bench/ has those).
 *
 * Usage: perf_churn N [null]
 */
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	void *volatile null = NULL;
	int free_null = argc > 2;
	for (long i = 0; i < n; i++) {
		volatile char *p = malloc(32);
		if (!p)
			return 3;
		p[0] = (char)i;
		free((void *)p);
		if (free_null)
			free(null);
	}
	return 0;
}
