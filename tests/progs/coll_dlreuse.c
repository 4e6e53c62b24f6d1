/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * coll_dlreuse.c - dlopen after dlclose at the same address, for tests/preload/collector_dlreuse.sh:
 * loads library A, has its a_leak keep A_MIB MiB, closes A (the memory stays live), loads
 * library B, checks that B's text landed where A's was (exit 77 when the kernel placed it
 * elsewhere), and has its b_leak keep B_MIB MiB. The collector must charge each leak to its own
 * library. Before closing A it opens A a second time and closes that handle (A stays loaded:
 * nothing may move). Not a checker: it writes the truth lines, the two load addresses and,
 * when preloaded, the stats after that first close ("stats_held <len> <json>") and at the end
 * ("stats <len> <json>").
 *
 * Usage: coll_dlreuse LIB_A LIB_B A_MIB B_MIB TRUTHFILE
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>

/* Opens lib and calls its leak function fn(mib); returns the handle, its base in *base. */
static void *load_and_leak(const char *lib, const char *fn, int mib, uintptr_t *base)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "coll_dlreuse: %s\n", dlerror());
		exit(3);
	}
	struct link_map *lm = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
		exit(3);
	*base = (uintptr_t)lm->l_addr;
	int (*leak)(int) = (int (*)(int))dlsym(h, fn);
	if (!leak || leak(mib) != 0)
		exit(3);
	return h;
}

static void print_stats(const char *tag)
{
	long (*st)(char *, size_t) = (long (*)(char *, size_t))dlsym(RTLD_DEFAULT, "heaptap_stats_json");
	static char js[65536];
	long n = st ? st(js, sizeof js) : -1;
	if (n > 0 && (size_t)n < sizeof js)
		printf("%s %ld %.*s\n", tag, n, (int)n, js);
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: coll_dlreuse LIB_A LIB_B A_MIB B_MIB TRUTHFILE\n");
		return 2;
	}
	int amib = atoi(argv[3]), bmib = atoi(argv[4]);
	uintptr_t abase, bbase;
	void *a = load_and_leak(argv[1], "a_leak", amib, &abase);
	void *again = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!again || dlclose(again) != 0)
		return 3;
	print_stats("stats_held");
	if (dlclose(a) != 0)
		return 3;
	(void)load_and_leak(argv[2], "b_leak", bmib, &bbase);
	printf("A at %#lx, B at %#lx\n", (unsigned long)abase, (unsigned long)bbase);
	if (abase != bbase) {
		fprintf(stderr, "coll_dlreuse: B was not loaded where A was\n");
		return 77;
	}
	print_stats("stats");
	FILE *f = fopen(argv[5], "w");
	if (!f)
		return 3;
	/* the leaks are blocks of 64 KiB (below the mmap threshold: they must not fill A's hole) */
	fprintf(f, "site a_leak req=%zu usable=0 col=flat\n", (size_t)amib << 20);
	fprintf(f, "site b_leak req=%zu usable=0 col=flat\n", (size_t)bmib << 20);
	return fclose(f) == 0 ? 0 : 3;
}
