/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dl_plugin.c - a shared library for tests/preload/collector_dlopen.sh: dl_plugin_keep()
 * allocates memory that stays live after the library is dlclose'd, so the final dump holds
 * frames of an unloaded library. Compiled by the test with cc -shared; not part of any build
 * target.
 */
#include <stdlib.h>
#include <string.h>

#define NO_TAIL() __asm__ volatile("" ::: "memory")

__attribute__((noinline)) void **dl_plugin_keep(int n, size_t size)
{
	void **v = malloc(sizeof(void *) * (size_t)n);
	NO_TAIL();
	for (int i = 0; v && i < n; i++) {
		v[i] = malloc(size);
		NO_TAIL();
		memset(v[i], 7, 64);
	}
	return v;
}
