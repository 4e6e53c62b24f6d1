/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * zone_leak.c - a known leak for the sampled-object zone's preload test: leak_site() keeps
 * argv[1] (default 64) blocks of 1 MiB; churn() allocates and frees 200,000 small blocks
 * (malloc, calloc, realloc, free_sized through dlsym when the library exports it) around
 * them; 16 more 1 MiB blocks are freed with free_sized or free. Then it writes heaptap's
 * stats JSON to argv[2] (when given and heaptap is loaded). Not a benchmark.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void **kept;

__attribute__((noinline)) static void leak_site(long n)
{
	kept = malloc((size_t)n * sizeof *kept);
	for (long i = 0; i < n; i++) {
		kept[i] = malloc(1 << 20);
		memset(kept[i], (int)i, 1 << 20);
	}
}

__attribute__((noinline)) static void churn(void)
{
	void (*fsized)(void *, size_t) = (void (*)(void *, size_t))dlsym(RTLD_DEFAULT, "free_sized");
	void *big[16];
	for (int i = 0; i < 16; i++)
		big[i] = malloc(1 << 20);
	for (long i = 0; i < 200000; i++) {
		size_t n = 16 + (size_t)(i * 7919 % 3000);
		char *p = i % 3 ? malloc(n) : calloc(1, n);
		p[0] = 1;
		p = realloc(p, n * 2);
		if (p[0] != 1) {
			fprintf(stderr, "zone_leak: realloc lost the contents\n");
			exit(1);
		}
		if (fsized && i % 2)
			fsized(p, n * 2);
		else
			free(p);
	}
	for (int i = 0; i < 16; i++) {
		if (fsized && i % 2)
			fsized(big[i], 1 << 20);
		else
			free(big[i]);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 64;
	leak_site(n);
	churn();
	for (long i = 0; i < n; i++)
		if (((unsigned char *)kept[i])[12345] != (unsigned char)i) {
			fprintf(stderr, "zone_leak: a leaked block changed\n");
			return 1;
		}
	long (*stats)(char *, size_t) = (long (*)(char *, size_t))dlsym(RTLD_DEFAULT, "heaptap_stats_json");
	if (argc > 2 && stats) {
		static char buf[1 << 16];
		long len = stats(buf, sizeof buf);
		FILE *f = fopen(argv[2], "w");
		if (!f || len <= 0)
			return 1;
		fwrite(buf, 1, (size_t)len, f);
		fclose(f);
	}
	return 0;
}
