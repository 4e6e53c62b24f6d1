/*
 * perf_churn.c - test program for the fast-path instruction budget: N rounds of malloc(32)
 * then free of the same block, nothing else, so the difference of two runs with different N
 * is the cost of N malloc/free pairs. Not a timing benchmark (bench/ has those).
 *
 * Usage: perf_churn N
 */
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	for (long i = 0; i < n; i++) {
		volatile char *p = malloc(32);
		if (!p)
			return 3;
		p[0] = (char)i;
		free((void *)p);
	}
	return 0;
}
