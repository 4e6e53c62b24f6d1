/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dl_reuse.c - the two libraries of tests/preload/collector_dlreuse.sh, built from this one file:
 * with -DLIB_A it exports a_leak, with -DLIB_B b_leak; each keeps mib MiB live in blocks of
 * 64 KiB (from the brk heap, so the library's own address range stays free for the next
 * dlopen). -DVARIANT=n changes the code (another build ID) without moving anything.
 */
#include <stdlib.h>
#include <string.h>

#ifndef VARIANT
#define VARIANT 0
#endif

static void *kept[4096];
static int nkept;

/* The loop is written out in each leak function, so that the function itself calls malloc. */
#define KEEP(mib)                                                    \
	do {                                                             \
		for (int i = 0; i < (mib) * 16 && nkept < 4096; i++) {       \
			void *p = malloc(64 << 10);                              \
			if (!p)                                                  \
				return -1;                                           \
			memset(p, VARIANT + 1, 64);                              \
			kept[nkept++] = p;                                       \
		}                                                            \
	} while (0)

#ifdef LIB_A
__attribute__((noinline)) int a_leak(int mib)
{
	KEEP(mib);
	return 0;
}
#else
__attribute__((noinline)) int b_leak(int mib)
{
	KEEP(mib);
	return 0;
}
#endif
