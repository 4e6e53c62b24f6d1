/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sym_inline.c - two levels of always-inline allocation helpers reached from two call sites,
 * for tests/e2e/sym_inline.sh, which builds it at -O2 and checks that each malloc call
 * resolves to the full inline chain (raw <- grab <- first_site / second_site) with the lines
 * marked below. Not a heap-profiling test: it only needs to exist as code.
 */
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) void *raw(size_t n)
{
	void *p = malloc(n); /* MARK_RAW */
	if (p)
		*(volatile char *)p = 1;
	return p;
}

static inline __attribute__((always_inline)) void *grab(size_t n)
{
	void *p = raw(n + 16); /* MARK_GRAB */
	return p;
}

__attribute__((noinline)) void *first_site(size_t n)
{
	void *p = grab(n * 2); /* MARK_FIRST */
	return p;
}

__attribute__((noinline)) void *second_site(size_t n)
{
	void *p = grab(n + 7); /* MARK_SECOND */
	return p;
}

int main(int argc, char **argv)
{
	void *a = first_site((size_t)argc), *b = second_site((size_t)argc);
	printf("%d\n", a != b);
	free(a);
	free(b);
	return 0;
}
