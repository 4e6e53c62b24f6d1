/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * scale_sites.c - test program for the collector at production scale (issue 13): many live
 * objects, many distinct stacks, deep stacks. Each mode prints the truth it produced, one
 * "site <function> <bytes> <objects>" line per site that stays live, to the file given.
 *
 * Usage:
 *   scale_sites live TRUTH [SCALE]  two threads keep 5 M objects (SCALE = 1, fewer below 1.0)
 *                                   from four sites: 1-, 8- and 24-byte objects and 1 MiB ones,
 *                                   beside a churn site whose objects are all freed
 *   scale_sites paths TRUTH [BITS]  walks 2^BITS (default 18) distinct call paths, each
 *                                   allocating 1 MiB at its leaf and freeing it, then leaks
 *                                   64 x 1 MiB from leak_after_churn
 *   scale_sites deep TRUTH DEPTH    recursion DEPTH frames deep, then 256 x 64 KiB kept
 *
 * Not a benchmark and not a unit test: the e2e scripts run it under the collector.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define noinline __attribute__((noinline))

static void *volatile sink;

struct kept {
	void **v;
	size_t n;
};

/* The four live sites: each returns its block, so the call to malloc is not a tail call. */
noinline static void *site_1byte(void)
{
	char *p = malloc(1);
	if (p)
		p[0] = 1;
	return p;
}

noinline static void *site_8byte(void)
{
	char *p = malloc(8);
	if (p)
		p[0] = 8;
	return p;
}

noinline static void *site_24byte(void)
{
	char *p = malloc(24);
	if (p)
		p[0] = 24;
	return p;
}

noinline static void *site_1mib(void)
{
	char *p = malloc(1 << 20);
	if (p)
		p[0] = 1;
	return p;
}

noinline static void *site_churn(void)
{
	char *p = malloc(40);
	if (p)
		p[0] = 40;
	return p;
}

struct live_job {
	long n1, n8, n24, nmib;
	struct kept k;
};

static void keep(struct kept *k, void *p)
{
	if (!p) {
		fprintf(stderr, "scale_sites: out of memory\n");
		exit(3);
	}
	k->v[k->n++] = p;
}

static void *live_thread(void *arg)
{
	struct live_job *j = arg;
	long total = j->n1 + j->n8 + j->n24 + j->nmib;
	j->k.v = malloc((size_t)total * sizeof *j->k.v);
	if (!j->k.v)
		exit(3);
	/* interleaved, as a real program's sites are */
	long a = 0, b = 0, c = 0, d = 0;
	while (a < j->n1 || b < j->n8 || c < j->n24 || d < j->nmib) {
		if (a < j->n1)
			keep(&j->k, site_1byte()), a++;
		if (b < j->n8)
			keep(&j->k, site_8byte()), b++;
		if (c < j->n24)
			keep(&j->k, site_24byte()), c++;
		if (d < j->nmib && (a >= j->n1 || (a & 0xffff) == 0))
			keep(&j->k, site_1mib()), d++;
		if ((a & 7) == 0)
			free(site_churn());
	}
	return NULL;
}

static int mode_live(FILE *truth, double scale)
{
	/* 5 M objects in all: 2 M of 1 byte, 1.5 M of 8, 1.5 M of 24, 24 of 1 MiB */
	struct live_job j[2];
	memset(j, 0, sizeof j);
	for (int t = 0; t < 2; t++) {
		j[t].n1 = (long)(1000000 * scale);
		j[t].n8 = (long)(750000 * scale);
		j[t].n24 = (long)(750000 * scale);
		j[t].nmib = 12;
	}
	pthread_t th[2];
	for (int t = 0; t < 2; t++)
		pthread_create(&th[t], NULL, live_thread, &j[t]);
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	long n1 = j[0].n1 + j[1].n1, n8 = j[0].n8 + j[1].n8, n24 = j[0].n24 + j[1].n24;
	long nmib = j[0].nmib + j[1].nmib;
	fprintf(truth, "site site_1byte %ld %ld\n", n1, n1);
	fprintf(truth, "site site_8byte %ld %ld\n", n8 * 8, n8);
	fprintf(truth, "site site_24byte %ld %ld\n", n24 * 24, n24);
	fprintf(truth, "site site_1mib %ld %ld\n", nmib << 20, nmib);
	fclose(truth);
	return 0; /* everything stays live until exit: the final dump holds it */
}

/* ---- many distinct paths: each bit of the path picks one of two call sites ---- */

static unsigned long leaves;

noinline static void path_leaf(void)
{
	void *p = malloc(1 << 20);
	sink = p;
	free(p);
	leaves++;
}

noinline static void path_step(unsigned bits, unsigned left);

/* Two functions, so each bit of the path is a different return address. */
noinline static void path_zero(unsigned bits, unsigned left)
{
	path_step(bits, left);
	sink = (void *)sink;
}

noinline static void path_one(unsigned bits, unsigned left)
{
	path_step(bits, left);
	sink = (void *)sink;
}

noinline static void path_step(unsigned bits, unsigned left)
{
	if (left == 0) {
		path_leaf();
		return;
	}
	if (bits & 1)
		path_one(bits >> 1, left - 1);
	else
		path_zero(bits >> 1, left - 1);
}

noinline static void *leak_after_churn(void)
{
	char *p = malloc(1 << 20);
	if (p)
		memset(p, 7, 64);
	return p;
}

static int mode_paths(FILE *truth, unsigned nbits)
{
	for (unsigned long path = 0; path < (1ul << nbits); path++)
		path_step((unsigned)path, nbits);
	static void *leaked[64];
	for (int i = 0; i < 64; i++)
		if (!(leaked[i] = leak_after_churn()))
			return 3;
	fprintf(truth, "paths %lu\n", leaves);
	fprintf(truth, "site leak_after_churn %ld %d\n", 64l << 20, 64);
	fclose(truth);
	return 0;
}

/* ---- deep stacks ---- */

noinline static void *deep_alloc(void)
{
	char *p = malloc(64 << 10);
	if (p)
		p[0] = 1;
	return p;
}

noinline static void deep_recurse(int depth, void **out, int n)
{
	if (depth > 0) {
		deep_recurse(depth - 1, out, n);
		sink = (void *)out;
		return;
	}
	for (int i = 0; i < n; i++)
		out[i] = deep_alloc();
}

static int mode_deep(FILE *truth, int depth)
{
	static void *kept_deep[256];
	deep_recurse(depth, kept_deep, 256);
	fprintf(truth, "site deep_alloc %ld %d\n", 256l << 16, 256);
	fclose(truth);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: scale_sites live|paths|deep TRUTH [N]\n");
		return 2;
	}
	FILE *truth = fopen(argv[2], "w");
	if (!truth) {
		perror(argv[2]);
		return 2;
	}
	if (strcmp(argv[1], "live") == 0)
		return mode_live(truth, argc > 3 ? atof(argv[3]) : 1.0);
	if (strcmp(argv[1], "paths") == 0)
		return mode_paths(truth, argc > 3 ? (unsigned)atoi(argv[3]) : 18);
	if (strcmp(argv[1], "deep") == 0)
		return mode_deep(truth, argc > 3 ? atoi(argv[3]) : 300);
	fprintf(stderr, "scale_sites: unknown mode %s\n", argv[1]);
	return 2;
}
