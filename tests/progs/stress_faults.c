/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stress_faults.c - a host that puts the collector in trouble and checks it stays out of the
 * way: all file descriptors used up before a dump (fds), far more distinct stacks and live
 * objects than the collector's tables hold (tables), an address-space limit hit by the host
 * itself (as). It prints the same lines with and without the collector, and, when heaptap is
 * loaded, its statistics JSON on one stderr line starting "STATS ".
 * Usage: stress_faults fds|tables|as
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char stats[1 << 16];

static void print_stats(void)
{
	long (*stats_json)(char *, size_t) = (long (*)(char *, size_t))dlsym(RTLD_DEFAULT, "heaptap_stats_json");
	if (stats_json && stats_json(stats, sizeof stats) > 0)
		fprintf(stderr, "STATS %s\n", stats);
}

__attribute__((noinline)) static void *fault_site(size_t n)
{
	void *p = malloc(n);
	if (p)
		memset(p, 3, n);
	__asm__ volatile("" ::: "memory");
	return p;
}

/* A distinct call stack for every depth. */
__attribute__((noinline)) static void *deep(int depth, size_t n)
{
	void *p = depth ? deep(depth - 1, n) : fault_site(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

static int run_fds(void)
{
	void *keep = fault_site(8 << 20);
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "heaptap_dump");
	int fds[65536], n = 0;
	while (n < 65536 && (fds[n] = open("/dev/null", O_RDONLY)) >= 0)
		n++;
	int rc = dump ? dump(NULL) : -EMFILE;
	for (int i = 0; i < n; i++)
		close(fds[i]);
	fprintf(stderr, "dump with no fd left: %d\n", rc);
	/* With descriptors back, dumps work again. */
	int rc2 = dump ? dump(NULL) : 0;
	fprintf(stderr, "dump after closing: %d\n", rc2);
	printf("fds: opened until EMFILE, host fine\n");
	print_stats();
	free(keep);
	return rc < 0 && rc2 == 0 ? 0 : 1;
}

static int run_tables(void)
{
	static void *live[5000];
	for (int i = 0; i < 5000; i++)
		live[i] = deep(i % 200, 64 + i % 7);
	long sum = 0;
	for (int i = 0; i < 5000; i++)
		sum += ((unsigned char *)live[i])[0];
	printf("tables: %d objects from 200 stacks, checksum %ld\n", 5000, sum);
	print_stats();
	for (int i = 0; i < 5000; i++)
		free(live[i]);
	return 0;
}

static int run_as(void)
{
	/* Allocate until the address-space limit refuses, then give it all back. */
	static void *blocks[100000];
	int n = 0;
	while (n < 100000 && (blocks[n] = fault_site(1 << 20)) != NULL)
		n++;
	for (int i = 0; i < n; i++)
		free(blocks[i]);
	void *again = fault_site(1 << 20);
	printf("as: malloc failed cleanly after some blocks; after freeing, malloc %s\n", again ? "works" : "fails");
	free(again);
	print_stats();
	return again ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "fds"))
		return run_fds();
	if (!strcmp(argv[1], "tables"))
		return run_tables();
	if (!strcmp(argv[1], "as"))
		return run_as();
	return 2;
}
