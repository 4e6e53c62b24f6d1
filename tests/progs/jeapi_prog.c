/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * jeapi_prog.c - a program written against jemalloc's control API, as jemalloc's heap-profiling
 * recipe and Mesos's libprocess write them: mallctl declared weak (and mallocx, sdallocx,
 * malloc_stats_print, which programs probe to learn that jemalloc is the allocator), used only
 * when present. tests/e2e/dropin_mallctl.sh runs it under heaptap, beside a real jemalloc and
 * linked with a static one. It is not a test by itself: it prints what each call returned.
 *
 *   jeapi_prog probe              the weak symbols and a few reads (version, arenas.narenas)
 *   jeapi_prog recipe DIR         prof.reset(0), prof.active off/on, prof.dump to DIR/one.heap,
 *                                 thread.prof.active off/on, prof.dump with NULL, stats.allocated,
 *                                 unknown names and bad lengths
 *   jeapi_prog mesos FILE         Mesos's start / dump / stop sequence, dumping to FILE
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int mallctl(const char *, void *, size_t *, void *, size_t) __attribute__((weak));
extern void *mallocx(size_t, int) __attribute__((weak));
extern void sdallocx(void *, size_t, int) __attribute__((weak));
extern void malloc_stats_print(void (*)(void *, const char *), void *, const char *) __attribute__((weak));

#define MIB (1024 * 1024)

static void *keep[256];
static int nkeep;

/* Each site allocates n blocks of 1 MiB and keeps them. */
__attribute__((noinline)) static void hidden_site(int n)
{
	for (int i = 0; i < n; i++)
		keep[nkeep++] = malloc(MIB);
}
__attribute__((noinline)) static void site_one(int n)
{
	for (int i = 0; i < n; i++)
		keep[nkeep++] = malloc(MIB);
}
__attribute__((noinline)) static void thread_off_site(int n)
{
	for (int i = 0; i < n; i++)
		keep[nkeep++] = malloc(MIB);
}
__attribute__((noinline)) static void site_two(int n)
{
	for (int i = 0; i < n; i++)
		keep[nkeep++] = malloc(MIB);
}

static int get_bool(const char *name, bool *v)
{
	size_t len = sizeof *v;
	return mallctl(name, v, &len, NULL, 0);
}

static int set_bool(const char *name, bool v, bool *old)
{
	size_t len = sizeof *old;
	return mallctl(name, old, &len, &v, sizeof v);
}

static int probe(void)
{
	printf("weak mallctl=%d mallocx=%d sdallocx=%d malloc_stats_print=%d\n", mallctl != NULL,
	       mallocx != NULL, sdallocx != NULL, malloc_stats_print != NULL);
	if (!mallctl)
		return 0;
	const char *version = NULL;
	size_t len = sizeof version;
	int rc = mallctl("version", &version, &len, NULL, 0);
	printf("version rc=%d %s\n", rc, rc == 0 ? version : "-");
	unsigned narenas = 0;
	len = sizeof narenas;
	rc = mallctl("arenas.narenas", &narenas, &len, NULL, 0);
	printf("arenas.narenas rc=%d\n", rc);
	bool prof = false;
	rc = get_bool("opt.prof", &prof);
	printf("opt.prof rc=%d %d\n", rc, prof);
	return 0;
}

static int recipe(const char *dir)
{
	char one[4096];
	snprintf(one, sizeof one, "%s/one.heap", dir);
	if (mallctl == NULL) {
		printf("no mallctl: jemalloc is not here\n");
		return 0;
	}
	bool b = false, cfg = false;
	int rc = get_bool("opt.prof", &b);
	int rc2 = get_bool("config.prof", &cfg);
	printf("opt.prof rc=%d %d config.prof rc=%d %d\n", rc, b, rc2, cfg);
	size_t lg = 0, len = sizeof lg;
	rc = mallctl("opt.lg_prof_sample", &lg, &len, NULL, 0);
	printf("opt.lg_prof_sample rc=%d %zu\n", rc, lg);
	/* every allocation sampled from here on */
	size_t zero = 0;
	rc = mallctl("prof.reset", NULL, NULL, &zero, sizeof zero);
	len = sizeof lg;
	rc2 = mallctl("prof.lg_sample", &lg, &len, NULL, 0);
	printf("prof.reset rc=%d prof.lg_sample rc=%d %zu\n", rc, rc2, lg);

	bool old = false;
	rc = set_bool("prof.active", false, &old);
	printf("prof.active=false rc=%d old=%d\n", rc, old);
	hidden_site(8);
	rc = set_bool("prof.active", true, &old);
	get_bool("prof.active", &b);
	printf("prof.active=true rc=%d old=%d now=%d\n", rc, old, b);
	site_one(24);
	const char *path = one;
	rc = mallctl("prof.dump", NULL, NULL, &path, sizeof path);
	printf("prof.dump one rc=%d\n", rc);

	rc = set_bool("thread.prof.active", false, &old);
	printf("thread.prof.active=false rc=%d old=%d\n", rc, old);
	thread_off_site(16);
	rc = set_bool("thread.prof.active", true, &old);
	printf("thread.prof.active=true rc=%d old=%d\n", rc, old);
	for (int i = 8; i < 8 + 24; i++) { /* site_one's blocks */
		free(keep[i]);
		keep[i] = NULL;
	}
	site_two(12);
	path = NULL;
	rc = mallctl("prof.dump", NULL, NULL, &path, sizeof path);
	printf("prof.dump NULL rc=%d\n", rc);

	uint64_t epoch = 1;
	len = sizeof epoch;
	rc = mallctl("epoch", &epoch, &len, &epoch, sizeof epoch);
	size_t allocated = 0;
	len = sizeof allocated;
	rc2 = mallctl("stats.allocated", &allocated, &len, NULL, 0);
	printf("epoch rc=%d stats.allocated rc=%d MiB=%zu\n", rc, rc2, (allocated + MIB / 2) / MIB);

	unsigned narenas = 0;
	len = sizeof narenas;
	printf("arenas.narenas rc=%d\n", mallctl("arenas.narenas", &narenas, &len, NULL, 0));
	uint64_t *counter = NULL;
	len = sizeof counter;
	printf("thread.allocatedp rc=%d\n", mallctl("thread.allocatedp", &counter, &len, NULL, 0));
	len = 1; /* a wrong length */
	printf("opt.lg_prof_sample len=1 rc=%d\n", mallctl("opt.lg_prof_sample", &lg, &len, NULL, 0));
	printf("opt.prof write rc=%d\n", mallctl("opt.prof", NULL, NULL, &b, sizeof b));
	printf("prof.dump read rc=%d\n", mallctl("prof.dump", &path, &len, NULL, 0));
	return 0;
}

/* Mesos's libprocess: updateJemallocSetting("prof.active", true) returns the previous value,
   writeJemallocSetting("prof.dump", path) passes the C string, then prof.active false. */
static int mesos(const char *file)
{
	if (mallctl == NULL) {
		printf("mesos: jemalloc not detected\n");
		return 0;
	}
	bool previous = false;
	int rc = set_bool("prof.active", true, &previous);
	printf("mesos start rc=%d previous=%d\n", rc, previous);
	site_one(10);
	const char *p = file;
	rc = mallctl("prof.dump", NULL, NULL, (void *)&p, sizeof p);
	printf("mesos dump rc=%d\n", rc);
	rc = set_bool("prof.active", false, &previous);
	printf("mesos stop rc=%d previous=%d\n", rc, previous);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc >= 2 && strcmp(argv[1], "probe") == 0)
		return probe();
	if (argc >= 3 && strcmp(argv[1], "recipe") == 0)
		return recipe(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "mesos") == 0)
		return mesos(argv[2]);
	fprintf(stderr, "usage: jeapi_prog probe | recipe DIR | mesos FILE\n");
	return 2;
}
