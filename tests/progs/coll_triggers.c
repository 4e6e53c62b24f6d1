/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * coll_triggers.c - drives each dump trigger for tests/preload/collector_triggers.sh: allocation
 * volume (interval dumps), a growing heap (high-water dumps), time passing (timed dumps), a
 * signal to itself (signal dumps) and the C API (manual dumps, found with dlsym so the program
 * also runs without heaptap; under jemalloc it falls back to mallctl("prof.dump")). It checks
 * only what the API returns and prints it; the script checks the files.
 *
 * Usage: coll_triggers churn MIB | grow MIB | sleep MS | signal | manual DIR | phases | tables
 *   phases: phase_a keeps 8 MiB, manual dump, frees it, phase_b keeps 5 MiB + 112000 B,
 *           manual dump, exit (the final dump follows)
 *   tables: 64 distinct stacks (recursion depths 0..63) x 100 live objects, then prints stats
 */
#include <dlfcn.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NO_TAIL() __asm__ volatile("" ::: "memory")

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Allocates and frees `mib` MiB in 64 KiB blocks: volume without growth. */
__attribute__((noinline)) static void churn_site(long mib)
{
	for (long i = 0; i < mib * 16; i++) {
		void *p = malloc(65536);
		NO_TAIL();
		if (!p)
			exit(3);
		memset(p, 1, 64);
		free(p);
	}
}

/* Grows the live heap by 1 MiB steps with pauses, so each step is a new high-water mark. */
__attribute__((noinline)) static void grow_site(long mib)
{
	for (long i = 0; i < mib; i++) {
		void *p = malloc(1u << 20);
		NO_TAIL();
		if (!p)
			exit(3);
		memset(p, 1, 4096);
		sleep_ms(30);
	}
}

static int files_matching(const char *pattern)
{
	glob_t g;
	int n = glob(pattern, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
	globfree(&g);
	return n;
}

/* heaptap_dump(NULL), or mallctl("prof.dump") under jemalloc; returns its result or -1. */
static int dump_now(void)
{
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "heaptap_dump");
	int (*mallctl)(const char *, void *, size_t *, void *, size_t) =
		(int (*)(const char *, void *, size_t *, void *, size_t))dlsym(RTLD_DEFAULT, "mallctl");
	const char *null = NULL;
	if (dump)
		return dump(NULL);
	if (mallctl)
		return mallctl("prof.dump", NULL, NULL, &null, sizeof null);
	return -1;
}

static void *phase_keep[1100];

__attribute__((noinline)) static void phase_a(void)
{
	for (int i = 0; i < 8; i++) {
		phase_keep[i] = malloc(1u << 20);
		NO_TAIL();
	}
}

__attribute__((noinline)) static void phase_b(void)
{
	for (int i = 0; i < 5; i++) {
		phase_keep[i] = malloc(1u << 20);
		NO_TAIL();
	}
	for (int i = 5; i < 1005; i++) {
		phase_keep[i] = malloc(112);
		NO_TAIL();
	}
}

static void *volatile table_keep[64 * 100]; /* volatile: else the compiler may drop the mallocs */

/* Recursion gives each depth its own stack; slots [from, to) of row `slot` get objects. */
__attribute__((noinline)) static void deep_alloc(int depth, int slot, int from, int to)
{
	if (depth > 0) {
		deep_alloc(depth - 1, slot, from, to);
		NO_TAIL();
		return;
	}
	for (int i = from; i < to; i++) {
		table_keep[slot * 100 + i] = malloc(48);
		NO_TAIL();
	}
}

static int tables(void)
{
	/* One object per stack first (fills a small stack table), then the other 99 (fills a
	   small live table), through ONE call instruction so both passes share their stacks. */
	static volatile int from[2] = {0, 1}, to[2] = {1, 100}, npasses = 2; /* not unrollable */
	for (int pass = 0; pass < npasses; pass++)
		for (int d = 0; d < 64; d++)
			deep_alloc(d, d, from[pass], to[pass]);
	long (*stats)(char *, size_t) = (long (*)(char *, size_t))dlsym(RTLD_DEFAULT, "heaptap_stats_json");
	static char buf[65536];
	long n = stats ? stats(buf, sizeof buf) : -1;
	printf("stats %ld %s\n", n, n > 0 ? buf : "");
	return n > 0 ? 0 : 1;
}

static int phases(void)
{
	phase_a();
	int r0 = dump_now();
	for (int i = 0; i < 8; i++)
		free(phase_keep[i]);
	phase_b();
	int r1 = dump_now();
	printf("dumps %d %d\n", r0, r1);
	return r0 == 0 && r1 == 0 ? 0 : 1;
}

static int manual(const char *dir)
{
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "heaptap_dump");
	long (*stats)(char *, size_t) = (long (*)(char *, size_t))dlsym(RTLD_DEFAULT, "heaptap_stats_json");
	int (*mallctl)(const char *, void *, size_t *, void *, size_t) =
		(int (*)(const char *, void *, size_t *, void *, size_t))dlsym(RTLD_DEFAULT, "mallctl");
	char path[4096];
	grow_site(2);
	if (dump) {
		printf("heaptap_dump(NULL) = %d\n", dump(NULL));
		snprintf(path, sizeof path, "%s/explicit.heap", dir);
		printf("heaptap_dump(explicit.heap) = %d\n", dump(path));
		snprintf(path, sizeof path, "%s/explicit.pb.gz", dir);
		printf("heaptap_dump(explicit.pb.gz) = %d\n", dump(path));
		static char buf[65536];
		if (stats) {
			long n = stats(buf, sizeof buf);
			printf("stats %ld %s\n", n, n > 0 ? buf : "");
		}
	} else if (mallctl) {
		const char *null = NULL;
		printf("heaptap_dump(NULL) = %d\n", mallctl("prof.dump", NULL, NULL, &null, sizeof null));
		snprintf(path, sizeof path, "%s/explicit.heap", dir);
		const char *p = path;
		printf("heaptap_dump(explicit.heap) = %d\n", mallctl("prof.dump", NULL, NULL, &p, sizeof p));
	} else {
		printf("no heaptap_dump and no mallctl in this process\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: coll_triggers churn MIB | grow MIB | sleep MS | signal | manual DIR |"
				" phases | tables\n");
		return 2;
	}
	const char *mode = argv[1];
	long arg = argc > 2 ? atol(argv[2]) : 0;
	if (strcmp(mode, "churn") == 0) {
		churn_site(arg);
	} else if (strcmp(mode, "grow") == 0) {
		grow_site(arg);
	} else if (strcmp(mode, "sleep") == 0) {
		grow_site(1);
		sleep_ms(arg);
	} else if (strcmp(mode, "signal") == 0) {
		grow_site(1);
		raise(SIGUSR2);
		/* The dump is written by the collector's thread; wait for it (at most 10 s). */
		for (int i = 0; i < 1000 && files_matching("*.s0.heap") == 0; i++)
			sleep_ms(10);
		printf("signal dump %s\n", files_matching("*.s0.heap") ? "seen" : "NOT seen");
	} else if (strcmp(mode, "manual") == 0 && argc == 3) {
		return manual(argv[2]);
	} else if (strcmp(mode, "phases") == 0) {
		return phases();
	} else if (strcmp(mode, "tables") == 0) {
		return tables();
	} else {
		fprintf(stderr, "coll_triggers: unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
