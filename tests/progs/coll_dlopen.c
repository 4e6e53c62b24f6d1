/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * coll_dlopen.c - loads a plugin library with dlopen, has it allocate memory that stays live,
 * and unloads it with dlclose before exit, for tests/preload/collector_dlopen.sh (the final
 * dump must still symbolize the plugin's frames). Checks nothing; writes truth lines.
 *
 * Usage: coll_dlopen PLUGIN.so TRUTHFILE
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: coll_dlopen PLUGIN.so TRUTHFILE\n");
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "coll_dlopen: %s\n", dlerror());
		return 3;
	}
	void **(*keep)(int, size_t) = (void **(*)(int, size_t))dlsym(h, "dl_plugin_keep");
	if (!keep)
		return 3;
	void **v = keep(5, 1u << 20);
	if (!v)
		return 3;
	if (dlclose(h) != 0)
		return 3;
	FILE *f = fopen(argv[2], "w");
	if (!f)
		return 3;
	fprintf(f, "site dl_plugin_keep req=%zu usable=0 col=flat objs=5x1048576+1x%zu\n",
		5 * (size_t)(1u << 20) + 5 * sizeof(void *), 5 * sizeof(void *));
	return fclose(f) == 0 ? 0 : 3;
}
