/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nofp_sites.c - a known-truth program for accuracy_nofp.sh, compiled by that test with -O2
 * -fomit-frame-pointer, so a frame-pointer walk cannot find the callers and only DWARF (CFI)
 * unwinding attributes the memory right. Two call chains outer_* -> middle_* -> leaf_*; the
 * leaves keep memory live. Not built by `make progs` (which forces frame pointers).
 *
 * Usage: nofp_sites TRUTHFILE   (leaf_* lines use col=flat, outer_* and middle_* col=cum)
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_TAIL() __asm__ volatile("" ::: "memory")

static void *keep[4096];
static size_t nkeep;
static unsigned long long leaf_a_bytes, leaf_b_bytes, leaf_a_usable, leaf_b_usable;
static volatile int sink;

/* Uses the stack and registers so the compiler has no reason to keep a frame chain. */
__attribute__((noinline, noclone)) static void *leaf_alpha(size_t n, int salt)
{
	volatile char scratch[64];
	for (size_t i = 0; i < sizeof scratch; i++)
		scratch[i] = (char)(i + (size_t)salt);
	void *p = malloc(n);
	NO_TAIL();
	if (!p)
		exit(3);
	memset(p, salt, 64);
	sink += scratch[salt & 63];
	leaf_a_bytes += n;
	leaf_a_usable += malloc_usable_size(p);
	return p;
}

__attribute__((noinline, noclone)) static void *leaf_beta(size_t n, int salt)
{
	void *p = calloc(1, n);
	NO_TAIL();
	if (!p)
		exit(3);
	((volatile char *)p)[n - 1] = (char)salt;
	leaf_b_bytes += n;
	leaf_b_usable += malloc_usable_size(p);
	return p;
}

__attribute__((noinline, noclone)) static void middle_alpha(int k)
{
	for (int i = 0; i < 1000; i++)
		keep[nkeep++] = leaf_alpha(4096, i + k);
	NO_TAIL();
}

__attribute__((noinline, noclone)) static void middle_beta(int k)
{
	for (int i = 0; i < 6; i++)
		keep[nkeep++] = leaf_beta(1u << 20, i + k);
	NO_TAIL();
}

__attribute__((noinline, noclone)) static void outer_alpha(int k)
{
	middle_alpha(k * 3);
	NO_TAIL();
}

__attribute__((noinline, noclone)) static void outer_beta(int k)
{
	middle_beta(k * 5);
	NO_TAIL();
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: nofp_sites TRUTHFILE\n");
		return 2;
	}
	outer_alpha(argc);
	NO_TAIL();
	outer_beta(argc);
	NO_TAIL();
	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 3;
	const char *names[3][2] = {{"leaf_alpha", "flat"}, {"middle_alpha", "cum"}, {"outer_alpha", "cum"}};
	for (int i = 0; i < 3; i++)
		fprintf(f, "site %s req=%llu usable=%llu col=%s objs=1000x4096\n", names[i][0],
			leaf_a_bytes, leaf_a_usable, names[i][1]);
	const char *bnames[3][2] = {{"leaf_beta", "flat"}, {"middle_beta", "cum"}, {"outer_beta", "cum"}};
	for (int i = 0; i < 3; i++)
		fprintf(f, "site %s req=%llu usable=%llu col=%s objs=6x1048576\n", bnames[i][0],
			leaf_b_bytes, leaf_b_usable, bnames[i][1]);
	return fclose(f) == 0 ? 0 : 3;
}
