/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * zone_stress.c - exercises the sampled-object zone (lib/sampzone.c) through the interposed
 * malloc family: 4 threads malloc/calloc/realloc/memalign/posix_memalign/aligned_alloc/valloc
 * and free blocks of 1 B to 8 MiB, each filled with a pattern derived from its address and
 * checked before it is freed or grown (no corruption; calloc's blocks zero; realloc keeps
 * min(old, new) bytes; malloc_usable_size at least the request). Midway the main thread calls
 * heaptap_reset while zone blocks are live (they are freed afterwards), and forks a child that
 * allocates, checks and frees too. At the end it prints heaptap's stats JSON (the "zone"
 * object) on stdout. Not a benchmark; exits 1 with a message on the first wrong byte.
 *
 * argv[1]: rounds per thread (default 4000).
 */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLOTS 64

struct blk {
	unsigned char *p;
	size_t n;
	unsigned char seed;
};

static long rounds = 4000;

static void die(const char *what, size_t n)
{
	fprintf(stderr, "zone_stress: %s (size %zu)\n", what, n);
	exit(1);
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* 1 B .. 8 MiB, mostly small */
static size_t pick_size(uint64_t *s)
{
	uint64_t r = next(s);
	switch (r % 8) {
	case 0: return 1 + r / 8 % 16;
	case 1: case 2: case 3: return 1 + r / 8 % 4096;
	case 4: case 5: return 1 + r / 8 % 20000;
	case 6: return 1 + r / 8 % (256 * 1024);
	default: return 1 + r / 8 % (8u << 20);
	}
}

/* pattern bytes at the start, the middle and the end (whole fill is too slow at 8 MiB) */
static void fill(struct blk *b)
{
	size_t n = b->n;
	for (size_t i = 0; i < n && i < 256; i++)
		b->p[i] = (unsigned char)(b->seed + i);
	for (size_t i = n > 256 ? n - 256 : n; i < n; i++)
		b->p[i] = (unsigned char)(b->seed + i);
	b->p[n / 2] = (unsigned char)(b->seed + n / 2);
}

static void check(const struct blk *b, size_t upto)
{
	size_t n = b->n < upto ? b->n : upto;
	for (size_t i = 0; i < n && i < 256; i++)
		if (b->p[i] != (unsigned char)(b->seed + i))
			die("corrupted block (head)", b->n);
	for (size_t i = b->n > 256 ? b->n - 256 : b->n; i < n; i++)
		if (b->p[i] != (unsigned char)(b->seed + i))
			die("corrupted block (tail)", b->n);
	if (b->n / 2 < n && b->p[b->n / 2] != (unsigned char)(b->seed + b->n / 2))
		die("corrupted block (middle)", b->n);
}

static void make(struct blk *b, uint64_t *s)
{
	size_t n = pick_size(s);
	unsigned kind = (unsigned)(next(s) % 8);
	void *p = NULL;
	switch (kind) {
	case 0: {
		p = calloc(1, n);
		if (!p)
			die("calloc failed", n);
		const unsigned char *c = p;
		for (size_t i = 0; i < n; i += (i < 4096 ? 1 : 509))
			if (c[i])
				die("calloc'ed block not zero", n);
		if (c[n - 1])
			die("calloc'ed block not zero at its end", n);
		break;
	}
	case 1: p = memalign(64 << (next(s) % 7), n); break;
	case 2: if (posix_memalign(&p, 8192, n)) p = NULL; break;
	case 3: p = aligned_alloc(4096, (n + 4095) & ~(size_t)4095); n = (n + 4095) & ~(size_t)4095; break;
	case 4: p = valloc(n); break;
	default: p = malloc(n); break;
	}
	if (!p)
		die("allocation failed", n);
	if (kind == 1 || kind == 2 || kind == 3 || kind == 4) {
		size_t a = kind == 2 ? 8192 : 64;
		if (kind >= 3)
			a = 4096;
		if ((uintptr_t)p % a)
			die("misaligned block", n);
	}
	if (malloc_usable_size(p) < n)
		die("malloc_usable_size below the request", n);
	b->p = p;
	b->n = n;
	b->seed = (unsigned char)next(s);
	fill(b);
}

static void *worker(void *arg)
{
	uint64_t s = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
	struct blk v[SLOTS];
	memset(v, 0, sizeof v);
	for (long r = 0; r < rounds; r++) {
		struct blk *b = &v[next(&s) % SLOTS];
		if (!b->p) {
			make(b, &s);
			continue;
		}
		check(b, b->n);
		if (next(&s) % 3 == 0) {
			size_t n = pick_size(&s);
			unsigned char *q = realloc(b->p, n);
			if (!q)
				die("realloc failed", n);
			b->p = q;
			check(b, n); /* the first min(old, new) bytes kept */
			b->n = n;
			fill(b);
		} else {
			free(b->p);
			b->p = NULL;
		}
	}
	for (int i = 0; i < SLOTS; i++)
		if (v[i].p) {
			check(&v[i], v[i].n);
			free(v[i].p);
		}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atol(argv[1]);
	int (*reset)(unsigned) = (int (*)(unsigned))dlsym(RTLD_DEFAULT, "heaptap_reset");
	long (*stats)(char *, size_t) = (long (*)(char *, size_t))dlsym(RTLD_DEFAULT, "heaptap_stats_json");
	/* blocks live across the reset: 1 MiB ones are sampled at the default rate */
	uint64_t s = 42;
	struct blk keep[32];
	for (int i = 0; i < 32; i++)
		make(&keep[i], &s);
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	if (reset && reset(19) != 0)
		die("heaptap_reset failed", 0);
	pid_t pid = fork();
	if (pid == 0) {
		worker((void *)(uintptr_t)99);
		for (int i = 0; i < 32; i++)
			check(&keep[i], keep[i].n);
		_exit(0);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("the forked child failed", 0);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 32; i++) {
		check(&keep[i], keep[i].n);
		free(keep[i].p);
	}
	free(NULL);
	if (stats) {
		static char buf[1 << 16];
		long n = stats(buf, sizeof buf);
		if (n > 0)
			fwrite(buf, 1, (size_t)n, stdout);
		putchar('\n');
	}
	printf("zone_stress: ok\n");
	return 0;
}
