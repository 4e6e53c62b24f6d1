/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mem_handoff.c - test program for "where freed memory stays": a producer thread allocates
 * 200 blocks of 256 KiB at produce_block and hands them to a consumer thread that frees them
 * (a producer/consumer hand-off), while the main thread allocates and frees 100 blocks of
 * 256 KiB itself at local_block and keeps 8 more at kept_block. The collector must charge
 * 200 x 256 KiB to produce_block as freed by another thread, and nothing to the others.
 *
 * Usage: mem_handoff   (prints the truth as "xfree produce_block <bytes>")
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 200
#define SZ (256 << 10)

static void *slots[N];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int produced, consumed;

__attribute__((noinline)) static void *produce_block(void)
{
	char *p = malloc(SZ);
	if (p)
		memset(p, 1, 64);
	return p;
}

__attribute__((noinline)) static void *local_block(void)
{
	char *p = malloc(SZ);
	if (p)
		memset(p, 2, 64);
	return p;
}

__attribute__((noinline)) static void *kept_block(void)
{
	char *p = malloc(SZ);
	if (p)
		memset(p, 3, 64);
	return p;
}

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 0; i < N; i++) {
		void *p = produce_block();
		pthread_mutex_lock(&lock);
		slots[i] = p;
		produced++;
		pthread_cond_broadcast(&cond);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	for (int i = 0; i < N; i++) {
		pthread_mutex_lock(&lock);
		while (produced <= i)
			pthread_cond_wait(&cond, &lock);
		void *p = slots[i];
		consumed++;
		pthread_mutex_unlock(&lock);
		free(p);
	}
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	pthread_create(&b, NULL, consumer, NULL);
	pthread_create(&a, NULL, producer, NULL);
	for (int i = 0; i < 100; i++)
		free(local_block());
	static void *kept[8];
	for (int i = 0; i < 8; i++)
		kept[i] = kept_block();
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("xfree produce_block %ld\n", (long)N * SZ);
	return kept[0] == NULL;
}
