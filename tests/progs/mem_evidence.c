/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mem_evidence.c - drives the memory-evidence features for tests/preload/mem_*.sh: the peak
 * profile, the memory accounting and the memory-pressure dumps. It reads heaptap's
 * statistics through heaptap_stats_json (found with dlsym) and waits on them (counts of
 * dumps and watch checks), never on the clock.
 *
 * Usage: mem_evidence peak         site_a keeps 200 MiB, frees it; site_b keeps 40 MiB; exit
 *        mem_evidence account      touches 64 MiB at site_b, prints "STATS <json>"
 *        mem_evidence retained     64 MiB live, then 100 MiB of 1 KiB blocks freed but kept by
 *                                  glibc (the last block pins the top); prints "STATS <json>"
 *        mem_evidence grow USAGE_FILE LIMIT   grows (grower) to 85 % of LIMIT as USAGE_FILE
 *                                  counts, waits for an 'o' dump, to 92 %, waits for the
 *                                  second, frees everything, waits three watch checks, exits
 *        mem_evidence fake DIR     keeps 10 MiB at grower and writes DIR/memory.current
 *                                  (85 %, 92 %, 30 % of DIR/memory.high) and DIR/memory.events
 *                                  (max 1), waiting for a dump or three checks after each
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NO_TAIL() __asm__ volatile("" ::: "memory")
#define MIB (1024 * 1024)

static long (*stats_fn)(char *, size_t);
static char js[1 << 17];

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* The number after "key": in the statistics (0 when absent). */
static unsigned long long stat_u64(const char *key)
{
	if (!stats_fn || stats_fn(js, sizeof js) < 0)
		return 0;
	char pat[128];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = strstr(js, pat);
	return p ? strtoull(p + strlen(pat), NULL, 10) : 0;
}

static unsigned long long oom_dumps(void)
{
	if (!stats_fn || stats_fn(js, sizeof js) < 0)
		return 0;
	const char *d = strstr(js, "\"dumps\":{");
	const char *p = d ? strstr(d, "\"oom\":") : NULL;
	return p ? strtoull(p + 6, NULL, 10) : 0;
}

/* Waits (polling the statistics; 60 s at most, a safety net only) until oom dumps >= n. */
static int wait_dumps(unsigned long long n)
{
	for (int i = 0; i < 6000; i++) {
		if (oom_dumps() >= n)
			return 0;
		sleep_ms(10);
	}
	fprintf(stderr, "mem_evidence: no memory-pressure dump %llu\n", n);
	return 1;
}

/* Waits until the watch made k more checks. */
static int wait_checks(unsigned k)
{
	unsigned long long c0 = stat_u64("checks");
	for (int i = 0; i < 6000; i++) {
		if (stat_u64("checks") >= c0 + k)
			return 0;
		sleep_ms(10);
	}
	fprintf(stderr, "mem_evidence: the watch stopped checking\n");
	return 1;
}

static void print_stats(void)
{
	if (stats_fn && stats_fn(js, sizeof js) > 0)
		printf("STATS %s\n", js);
}

static void *blocks_a[256], *blocks_b[64];

__attribute__((noinline)) static void site_a(void)
{
	for (int i = 0; i < 200; i++) {
		blocks_a[i] = malloc(MIB);
		memset(blocks_a[i], 1, MIB);
	}
	NO_TAIL();
}

__attribute__((noinline)) static void site_b(int mib)
{
	for (int i = 0; i < mib; i++) {
		blocks_b[i] = malloc(MIB);
		memset(blocks_b[i], 2, MIB);
	}
	NO_TAIL();
}

static void *grown[4096];
static int ngrown;

__attribute__((noinline)) static void grower(int mib)
{
	for (int i = 0; i < mib && ngrown < 4096; i++) {
		grown[ngrown] = malloc(MIB);
		memset(grown[ngrown++], 3, MIB);
	}
	NO_TAIL();
}

static unsigned long long read_u64(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return strtoull(buf, NULL, 10);
}

static void write_text(const char *dir, const char *leaf, const char *text)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, leaf);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void write_current(const char *dir, unsigned long long v)
{
	char t[32];
	snprintf(t, sizeof t, "%llu\n", v);
	write_text(dir, "memory.current", t);
}

/* Grows at grower until usage (as the file counts) reaches pct % of limit. */
static void grow_to(const char *usage_file, unsigned long long limit, int pct)
{
	while (read_u64(usage_file) * 100 < limit * (unsigned long long)pct)
		grower(1);
}

int main(int argc, char **argv)
{
	*(void **)&stats_fn = dlsym(RTLD_DEFAULT, "heaptap_stats_json");
	if (argc < 2)
		return 2;
	/* 1 MiB blocks straight from mmap: freeing them gives the memory back at once */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	if (!strcmp(argv[1], "peak")) {
		site_a();
		for (int i = 0; i < 200; i++)
			free(blocks_a[i]);
		site_b(40);
		return 0;
	}
	if (!strcmp(argv[1], "account")) {
		site_b(64);
		print_stats();
		return 0;
	}
	if (!strcmp(argv[1], "retained")) {
		mallopt(M_TRIM_THRESHOLD, 1 << 30); /* keep what is freed (as long-running servers see) */
		site_b(64);
		size_t n = 100 * 1024;
		void **small = malloc(n * sizeof *small);
		for (size_t i = 0; i < n; i++) {
			small[i] = malloc(1000);
			memset(small[i], 4, 1000);
		}
		for (size_t i = 0; i + 1 < n; i++)
			free(small[i]);
		print_stats();
		return 0;
	}
	if (!strcmp(argv[1], "grow") && argc == 4) {
		unsigned long long limit = strtoull(argv[3], NULL, 10);
		grow_to(argv[2], limit, 85);
		if (wait_dumps(1))
			return 1;
		grow_to(argv[2], limit, 92);
		if (wait_dumps(2))
			return 1;
		for (int i = 0; i < ngrown; i++)
			free(grown[i]);
		ngrown = 0;
		return wait_checks(3);
	}
	if (!strcmp(argv[1], "fake") && argc == 3) {
		char path[4096];
		snprintf(path, sizeof path, "%s/memory.high", argv[2]);
		unsigned long long limit = read_u64(path);
		grower(10);
		write_current(argv[2], limit * 85 / 100);
		if (wait_dumps(1))
			return 1;
		write_current(argv[2], limit * 92 / 100);
		if (wait_dumps(2))
			return 1;
		write_current(argv[2], limit * 30 / 100);
		if (wait_checks(3))
			return 1;
		write_text(argv[2], "memory.events", "low 0\nhigh 0\nmax 1\noom 0\noom_kill 0\n");
		return wait_dumps(3);
	}
	return 2;
}
