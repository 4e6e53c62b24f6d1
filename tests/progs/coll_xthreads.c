/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * coll_xthreads.c - 8 threads that allocate from their own site and free each other's objects,
 * for tests/preload/collector_threads.sh. Each thread pushes objects into a shared ring, pops
 * the objects other threads pushed and frees them; at the end each thread keeps a known number
 * of its own objects live. It checks nothing; it writes truth lines (format of truth_sites.c).
 *
 * Usage: coll_xthreads TRUTHFILE
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_TAIL() __asm__ volatile("" ::: "memory")
#define NTHREADS 8
#define ROUNDS 20000
#define KEEP 64

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static void *ring[1024];
static size_t ring_head, ring_tail;
static void *kept[NTHREADS][KEEP];
static unsigned long long kept_usable[NTHREADS];

static void ring_push(void *p)
{
	void *victim = NULL;
	pthread_mutex_lock(&ring_lock);
	if (ring_head - ring_tail == 1024)
		victim = ring[ring_tail++ % 1024];
	ring[ring_head++ % 1024] = p;
	pthread_mutex_unlock(&ring_lock);
	free(victim); /* usually another thread's object */
}

static void *ring_pop(void)
{
	void *p = NULL;
	pthread_mutex_lock(&ring_lock);
	if (ring_head != ring_tail)
		p = ring[ring_tail++ % 1024];
	pthread_mutex_unlock(&ring_lock);
	return p;
}

/* The churn: objects of mixed sizes, freed by whichever thread pops them. */
__attribute__((noinline)) static void *xthread_churn(unsigned seed)
{
	void *p = malloc(32 + (seed % 4000));
	NO_TAIL();
	return p;
}

#define WORKER_SITE(k)                                                           \
	__attribute__((noinline)) static void worker_site_##k(void)              \
	{                                                                        \
		for (int i = 0; i < KEEP; i++) {                                 \
			kept[k][i] = malloc(8192 * ((k) + 1));                   \
			NO_TAIL();                                               \
			kept_usable[k] += malloc_usable_size(kept[k][i]);        \
		}                                                                \
	}
WORKER_SITE(0)
WORKER_SITE(1)
WORKER_SITE(2)
WORKER_SITE(3)
WORKER_SITE(4)
WORKER_SITE(5)
WORKER_SITE(6)
WORKER_SITE(7)
static void (*const sites[NTHREADS])(void) = {worker_site_0, worker_site_1, worker_site_2, worker_site_3,
					      worker_site_4, worker_site_5, worker_site_6, worker_site_7};

static void *worker(void *arg)
{
	int k = (int)(long)arg;
	unsigned seed = (unsigned)k * 2654435761u;
	for (int r = 0; r < ROUNDS; r++) {
		seed = seed * 1103515245u + 12345u;
		void *p = xthread_churn(seed >> 8);
		if (!p)
			abort();
		memset(p, k, 16);
		ring_push(p);
		if (r & 1) {
			void *q = ring_pop();
			if (q && (r & 2)) {
				void *g = realloc(q, 64 + (seed % 8000)); /* grow another thread's object */
				if (!g)
					abort();
				ring_push(g);
			} else {
				free(q);
			}
		}
	}
	sites[k]();
	NO_TAIL();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: coll_xthreads TRUTHFILE\n");
		return 2;
	}
	pthread_t th[NTHREADS];
	for (long k = 0; k < NTHREADS; k++)
		if (pthread_create(&th[k], NULL, worker, (void *)k) != 0)
			return 3;
	for (int k = 0; k < NTHREADS; k++)
		pthread_join(th[k], NULL);
	void *p;
	while ((p = ring_pop()) != NULL)
		free(p);
	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 3;
	for (int k = 0; k < NTHREADS; k++)
		fprintf(f, "site worker_site_%d req=%d usable=%llu col=flat objs=%dx%d\n", k,
			KEEP * 8192 * (k + 1), kept_usable[k], KEEP, 8192 * (k + 1));
	fprintf(f, "site xthread_churn req=0 usable=0 col=flat objs=0x0\n");
	return fclose(f) == 0 ? 0 : 3;
}
