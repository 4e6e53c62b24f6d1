/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sym_selfprof.c - writes a heap_v2 profile of its own call stacks (glibc backtrace()) and its
 * /proc/self/maps, so tests/e2e/sym_maps.sh can check the symbolizer on real run-time
 * addresses (PIE at a random base, non-PIE, a dlopen'ed library) without the collector.
 * Built with -DSYM_LIB it is instead the shared library the program dlopens.
 * Usage: sym_selfprof OUT.heap [LIBRARY.so]
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*record_fn)(void);

#ifdef SYM_LIB
__attribute__((noinline)) void lib_inner(record_fn rec)
{
	rec(); /* MARK_LIB_INNER */
	__asm__ volatile("");
}

void lib_entry(record_fn rec)
{
	lib_inner(rec); /* MARK_LIB_ENTRY */
	__asm__ volatile("");
}
#else
static FILE *out;

/* Writes the caller's stack as one heap_v2 record: frame 0 as a lookup address (return
   address - 1), the others as return addresses (readers subtract 1, as jeprof does). */
__attribute__((noinline)) static void record(void)
{
	void *pcs[64];
	int n = backtrace(pcs, 64);
	fprintf(out, "@");
	for (int i = 1; i < n; i++)
		fprintf(out, " 0x%lx", (unsigned long)pcs[i] - (i == 1));
	fprintf(out, "\n  t*: 1: 4096 [0: 0]\n");
}

__attribute__((noinline)) void leaf(void)
{
	record(); /* MARK_LEAF */
	__asm__ volatile("");
}

__attribute__((noinline)) void middle(void)
{
	leaf(); /* MARK_MIDDLE */
	__asm__ volatile("");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: sym_selfprof OUT.heap [LIBRARY.so]\n");
		return 2;
	}
	out = fopen(argv[1], "w");
	if (!out)
		return 1;
	fprintf(out, "heap_v2/1\n  t*: %d: %d [0: 0]\n", argc > 2 ? 2 : 1, argc > 2 ? 8192 : 4096);
	middle(); /* MARK_MAIN */
	if (argc > 2) {
		void *h = dlopen(argv[2], RTLD_NOW);
		void (*entry)(record_fn) = h ? (void (*)(record_fn))dlsym(h, "lib_entry") : NULL;
		if (!entry) {
			fprintf(stderr, "sym_selfprof: %s\n", dlerror());
			return 1;
		}
		entry(record); /* MARK_MAIN_LIB */
	}
	fprintf(out, "\nMAPPED_LIBRARIES:\n");
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[4096];
	while (maps && fgets(line, sizeof(line), maps))
		fputs(line, out);
	if (maps)
		fclose(maps);
	return fclose(out) != 0;
}
#endif
