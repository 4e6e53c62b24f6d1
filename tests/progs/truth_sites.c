/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * truth_sites.c - a known-truth program for the accuracy tests: distinct non-inlined functions
 * ("sites") each keep a known number of bytes live until exit (small objects, large ones,
 * calloc, realloc growth chains, posix_memalign/aligned_alloc, reallocarray/memalign/valloc/
 * pvalloc, mixed sizes on one stack, one site per thread) and one site allocates and frees
 * everything (~0 live). It is not a benchmark and checks nothing.
 *
 * Usage: truth_sites exact|sampled TRUTHFILE
 *   exact    ~30 MiB live, for lg_prof_sample:0 (every allocation recorded)
 *   sampled  ~340 MiB live, every site but site_mixed and the thread ones >= 8 MiB, for the
 *            default rate
 *            (sized so 5% is >= 4.5 sigma of the mean over 24 runs: docs/DESIGN.md)
 * TRUTHFILE gets one line per site (format in tests/e2e/lib/README.md):
 *   site <function> req=<bytes> usable=<bytes> alloc=<bytes> alloc_usable=<bytes> col=flat
 *        objs=<count>x<size>[+<count>x<size>...]
 * (alloc counts every allocation of the site, freed or not: what prof_accum reports)
 * req counts requested sizes (what heaptap reports), usable counts malloc_usable_size (what
 * jemalloc's own profiler reports), so the same program validates the scripts against both.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keeps the call from becoming a tail call, so the site's frame stays on the stack. */
#define NO_TAIL() __asm__ volatile("" ::: "memory")

#define MAXSIZES 4

struct site {
	const char *name;
	unsigned long long req, usable;    /* live at exit */
	unsigned long long alloc, alloc_usable; /* allocated in all, freed or not (prof_accum) */
	int nsizes;
	unsigned long long count[MAXSIZES], size[MAXSIZES];
};

static struct site sites[16];
static int nsites;
static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;

/* Everything kept live is reachable from here, so nothing is a leak in the C sense. */
static void **keep;
static size_t nkeep, capkeep;

static void die(const char *what)
{
	fprintf(stderr, "truth_sites: %s failed\n", what);
	exit(3);
}

static void keep_ptr(void *p)
{
	if (!p)
		die("allocation");
	pthread_mutex_lock(&sites_lock);
	if (nkeep == capkeep) {
		/* The bookkeeping array itself comes from mmap-sized chunks via malloc in main's frame
		   only before sites run: see main(), which reserves it up front. */
		pthread_mutex_unlock(&sites_lock);
		die("keep array too small");
	}
	keep[nkeep++] = p;
	pthread_mutex_unlock(&sites_lock);
}

static struct site *site_add(const char *name)
{
	pthread_mutex_lock(&sites_lock);
	struct site *s = &sites[nsites++];
	pthread_mutex_unlock(&sites_lock);
	memset(s, 0, sizeof *s);
	s->name = name;
	return s;
}

/* Counts an allocation that is freed (or reallocated) before exit. */
static void site_alloc_only(struct site *s, void *p, unsigned long long size)
{
	s->alloc += size;
	s->alloc_usable += malloc_usable_size(p);
}

/* Counts an allocation that stays live to the end. */
static void site_count(struct site *s, void *p, unsigned long long size)
{
	site_alloc_only(s, p, size);
	s->req += size;
	s->usable += malloc_usable_size(p);
	for (int i = 0; i < s->nsizes; i++)
		if (s->size[i] == size) {
			s->count[i]++;
			return;
		}
	if (s->nsizes == MAXSIZES)
		die("site_count");
	s->size[s->nsizes] = size;
	s->count[s->nsizes++] = 1;
}

static void touch(void *p, size_t n)
{
	for (size_t i = 0; i < n; i += 4096)
		((volatile char *)p)[i] = 1;
}

__attribute__((noinline)) static void site_small64(size_t n)
{
	struct site *s = site_add("site_small64");
	for (size_t i = 0; i < n; i++) {
		void *p = malloc(64);
		NO_TAIL();
		keep_ptr(p);
		site_count(s, p, 64);
	}
}

__attribute__((noinline)) static void site_large2m(size_t n)
{
	struct site *s = site_add("site_large2m");
	for (size_t i = 0; i < n; i++) {
		void *p = malloc(2u << 20);
		NO_TAIL();
		touch(p, 2u << 20);
		keep_ptr(p);
		site_count(s, p, 2u << 20);
	}
}

__attribute__((noinline)) static void site_calloc(size_t n)
{
	struct site *s = site_add("site_calloc");
	for (size_t i = 0; i < n; i++) {
		void *p = calloc(256, 4096);
		NO_TAIL();
		keep_ptr(p);
		site_count(s, p, 256 * 4096);
	}
}

/* Each chain starts at 100 bytes and grows by half until it reaches 3 MiB; only the final
   block is live. */
__attribute__((noinline)) static void site_realloc(size_t n)
{
	struct site *s = site_add("site_realloc");
	const size_t final = 3u << 20;
	for (size_t i = 0; i < n; i++) {
		size_t sz = 100;
		void *p = realloc(NULL, sz);
		NO_TAIL();
		if (!p)
			die("realloc");
		site_alloc_only(s, p, sz);
		while (sz < final) {
			sz = sz + sz / 2 < final ? sz + sz / 2 : final;
			p = realloc(p, sz);
			NO_TAIL();
			if (!p)
				die("realloc");
			((volatile char *)p)[sz - 1] = 1;
			if (sz < final)
				site_alloc_only(s, p, sz);
		}
		keep_ptr(p);
		site_count(s, p, final);
	}
}

__attribute__((noinline)) static void site_memalign(size_t n)
{
	struct site *s = site_add("site_memalign");
	for (size_t i = 0; i < n; i++) {
		void *p = NULL;
		if (posix_memalign(&p, 4096, 1u << 20) != 0)
			die("posix_memalign");
		NO_TAIL();
		keep_ptr(p);
		site_count(s, p, 1u << 20);
		void *q = aligned_alloc(64, 1u << 20);
		NO_TAIL();
		keep_ptr(q);
		site_count(s, q, 1u << 20);
	}
}

/* 3 MiB of 64-byte objects and four 1 MiB objects from ONE call instruction, so one stack
   mixes sizes: jeprof scales a stack by its average size, so only pre-compensated counts
   (docs/DESIGN.md section 4) give the right total. Kept under 8 MiB on purpose. */
__attribute__((noinline)) static void site_mixed(void)
{
	struct site *s = site_add("site_mixed");
	for (size_t i = 0; i < 49156; i++) {
		size_t sz = i % 12289 == 0 ? (size_t)1 << 20 : 64;
		void *p = malloc(sz);
		NO_TAIL();
		keep_ptr(p);
		site_count(s, p, sz);
	}
}

/* The rest of the malloc family, 1 MiB each per round: reallocarray, memalign, valloc and
   pvalloc. Only run under heaptap, which interposes them all (jemalloc's profiler does not
   see glibc's pvalloc, and jeprof would credit glibc's reallocarray wrapper). */
__attribute__((noinline)) static void site_oddalloc(size_t n)
{
	struct site *s = site_add("site_oddalloc");
	for (size_t i = 0; i < n; i++) {
		void *p = reallocarray(NULL, 256, 4096);
		NO_TAIL();
		keep_ptr(p);
		site_count(s, p, 1u << 20);
		p = memalign(256, 1u << 20);
		NO_TAIL();
		keep_ptr(p);
		site_count(s, p, 1u << 20);
		p = valloc(1u << 20);
		NO_TAIL();
		keep_ptr(p);
		site_count(s, p, 1u << 20);
		p = pvalloc(1u << 20);
		NO_TAIL();
		keep_ptr(p);
		site_count(s, p, 1u << 20);
	}
}

/* Allocates and frees: nothing of it is live at the end. */
__attribute__((noinline)) static void site_churn(size_t rounds)
{
	struct site *s = site_add("site_churn");
	void *tmp[256];
	for (size_t r = 0; r < rounds; r++) {
		for (int i = 0; i < 256; i++) {
			tmp[i] = malloc(4096 + 64 * (size_t)i);
			NO_TAIL();
			if (!tmp[i])
				die("malloc");
			site_alloc_only(s, tmp[i], 4096 + 64 * (size_t)i);
		}
		for (int i = 0; i < 256; i++)
			free(tmp[i]);
	}
}

/* One site per thread, each its own function: 16 KiB and 256 KiB objects mixed. */
static size_t thread_nsmall, thread_nbig;

#define THREAD_SITE(k)                                                           \
	__attribute__((noinline)) static void thread_site_##k(void)              \
	{                                                                        \
		struct site *s = site_add("thread_site_" #k);                    \
		for (size_t i = 0; i < thread_nsmall; i++) {                     \
			void *p = malloc(16384);                                 \
			NO_TAIL();                                               \
			keep_ptr(p);                                             \
			site_count(s, p, 16384);                                 \
		}                                                                \
		for (size_t i = 0; i < thread_nbig; i++) {                       \
			void *p = malloc(256u << 10);                            \
			NO_TAIL();                                               \
			keep_ptr(p);                                             \
			site_count(s, p, 256u << 10);                            \
		}                                                                \
	}                                                                        \
	static void *thread_main_##k(void *arg)                                  \
	{                                                                        \
		(void)arg;                                                       \
		thread_site_##k();                                               \
		NO_TAIL();                                                       \
		return NULL;                                                     \
	}
THREAD_SITE(0)
THREAD_SITE(1)
THREAD_SITE(2)
THREAD_SITE(3)

static void write_truth(const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	if (!f)
		die("fopen truth file");
	for (int i = 0; i < nsites; i++) {
		struct site *s = &sites[i];
		fprintf(f, "site %s req=%llu usable=%llu alloc=%llu alloc_usable=%llu col=flat objs=", s->name,
			s->req, s->usable, s->alloc, s->alloc_usable);
		if (s->nsizes == 0)
			fprintf(f, "0x0");
		for (int j = 0; j < s->nsizes; j++)
			fprintf(f, "%s%llux%llu", j ? "+" : "", s->count[j], s->size[j]);
		fputc('\n', f);
	}
	if (f != stdout && fclose(f) != 0)
		die("fclose truth file");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "exact") && strcmp(argv[1], "sampled"))) {
		fprintf(stderr, "usage: truth_sites exact|sampled TRUTHFILE\n");
		return 2;
	}
	int sampled = strcmp(argv[1], "sampled") == 0;
	/* exact: ~30 MiB; sampled: every non-thread site >= 8 MiB (see docs/DESIGN.md for why). */
	size_t n_small = sampled ? (176u << 20) / 64 : 20000;
	size_t n_large = sampled ? 8 : 4;
	size_t n_calloc = sampled ? 56 : 4;
	size_t n_realloc = sampled ? 4 : 2;
	size_t n_memalign = sampled ? 28 : 3;
	size_t churn = sampled ? 64 : 16;
	thread_nsmall = sampled ? 128 : 40;
	thread_nbig = sampled ? 8 : 2;

	capkeep = n_small + n_large + n_calloc + n_realloc + 2 * n_memalign + 49156 + 4 +
		  4 * (thread_nsmall + thread_nbig) + 16;
	keep = calloc(capkeep, sizeof *keep);
	if (!keep)
		die("calloc keep");

	site_small64(n_small);
	NO_TAIL();
	site_large2m(n_large);
	NO_TAIL();
	site_calloc(n_calloc);
	NO_TAIL();
	site_realloc(n_realloc);
	NO_TAIL();
	site_memalign(n_memalign);
	NO_TAIL();
	site_mixed();
	NO_TAIL();
	if (dlsym(RTLD_DEFAULT, "heaptap_dump")) {
		site_oddalloc(1);
		NO_TAIL();
	}
	site_churn(churn);
	NO_TAIL();

	pthread_t th[4];
	void *(*mains[4])(void *) = {thread_main_0, thread_main_1, thread_main_2, thread_main_3};
	for (int k = 0; k < 4; k++)
		if (pthread_create(&th[k], NULL, mains[k], NULL) != 0)
			die("pthread_create");
	for (int k = 0; k < 4; k++)
		pthread_join(th[k], NULL);

	write_truth(argv[2]);
	/* Everything in keep stays live through the final dump at exit. */
	return 0;
}
