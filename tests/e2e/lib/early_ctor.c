/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * early_ctor.c - a preloaded library whose constructor allocates before the collector's own
 * constructor has run (tests/preload/collector_early_late.sh puts it after libheaptap.so in
 * LD_PRELOAD, and the dynamic linker runs the later one's constructor first). early_keep()
 * keeps 2 MiB live to the end; the rest is malloc/calloc/realloc/free churn.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NO_TAIL() __asm__ volatile("" ::: "memory")

static void *early_kept[2];

__attribute__((noinline)) static void early_keep(void)
{
	for (int i = 0; i < 2; i++) {
		early_kept[i] = malloc(1u << 20);
		NO_TAIL();
		if (early_kept[i])
			memset(early_kept[i], 3, 4096);
	}
}

__attribute__((constructor)) static void early_ctor(void)
{
	void *a = calloc(16, 16), *b = malloc(100);
	b = realloc(b, 5000);
	free(a);
	free(b);
	early_keep();
	NO_TAIL();
	static const char msg[] = "early_ctor: allocated before main\n";
	if (write(2, msg, sizeof msg - 1) < 0)
		_exit(3);
}
