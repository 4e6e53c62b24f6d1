/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stress_threads.c - a hostile host for the collector: 64 threads (far more than cores)
 * allocating, freeing each other's objects through a shared ring, realloc'ing chains, and
 * exiting while objects they sampled are still live; a 1 kHz SIGALRM landing inside malloc;
 * thread-specific-data destructors that allocate as threads exit. At the end every thread's
 * kept objects (allocated in stress_keep) are still live and the exact total is printed, so at
 * lg_prof_sample:0 the dump must show exactly that much in stress_keep.
 * Usage: stress_threads [--usr2 N]  (--usr2: also send itself N SIGUSR2 during the run, for
 * prof_signal:USR2; only meaningful under the collector, which handles the signal).
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define NTHREADS 64
#define RING 4096
#define KEEP_PER_THREAD 32

static void *ring[RING];
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static void *kept[NTHREADS][KEEP_PER_THREAD];
static size_t kept_bytes[NTHREADS];
static volatile sig_atomic_t alarms;
static pthread_key_t tsd_key;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void tsd_destructor(void *p)
{
	/* Allocation from a thread destructor, as the thread exits. */
	void *q = malloc(100);
	memset(q, 1, 100);
	free(q);
	free(p);
}

__attribute__((noinline)) static void *stress_keep(size_t n)
{
	void *p = malloc(n);
	memset(p, 7, n);
	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) static void stress_churn(unsigned *seed)
{
	size_t n = 16 + rand_r(seed) % 3000;
	void *p = rand_r(seed) % 4 ? malloc(n) : calloc(1, n);
	unsigned slot = rand_r(seed) % RING;
	pthread_mutex_lock(&ring_lock);
	void *old = ring[slot];
	ring[slot] = p;
	pthread_mutex_unlock(&ring_lock);
	free(old); /* most likely allocated by another thread */
}

__attribute__((noinline)) static void stress_realloc(unsigned *seed)
{
	char *p = NULL;
	for (int i = 1; i <= 12; i++) {
		p = realloc(p, (size_t)i * (64 + rand_r(seed) % 512));
		p[0] = (char)i;
	}
	free(p);
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	unsigned seed = (unsigned)id * 2654435761u;
	pthread_setspecific(tsd_key, malloc(64));
	for (int i = 0; i < 3000; i++) {
		stress_churn(&seed);
		if (i % 50 == 0)
			stress_realloc(&seed);
	}
	for (int k = 0; k < KEEP_PER_THREAD; k++) {
		size_t n = 1000 + (size_t)id * 100 + (size_t)k * 3;
		kept[id][k] = stress_keep(n);
		kept_bytes[id] += n;
	}
	return NULL;
}

static void *usr2_sender(void *arg)
{
	int n = (int)(intptr_t)arg;
	for (int i = 0; i < n; i++) {
		kill(getpid(), SIGUSR2);
		usleep(2000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int usr2 = argc > 2 && strcmp(argv[1], "--usr2") == 0 ? atoi(argv[2]) : 0;
	pthread_key_create(&tsd_key, tsd_destructor);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 1000}, {0, 1000}};
	setitimer(ITIMER_REAL, &it, NULL);

	pthread_t sender, t[NTHREADS];
	if (usr2)
		pthread_create(&sender, NULL, usr2_sender, (void *)(intptr_t)usr2);
	/* Two waves: the first wave's threads have exited (their kept objects live on) while the
	   second wave runs. */
	for (int wave = 0; wave < 2; wave++) {
		for (int i = wave; i < NTHREADS; i += 2)
			pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
		for (int i = wave; i < NTHREADS; i += 2)
			pthread_join(t[i], NULL);
	}
	if (usr2)
		pthread_join(sender, NULL);
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	for (int i = 0; i < RING; i++)
		free(ring[i]);
	size_t total = 0;
	for (int i = 0; i < NTHREADS; i++)
		total += kept_bytes[i];
	printf("kept %d objects, %zu bytes\n", NTHREADS * KEEP_PER_THREAD, total);
	fprintf(stderr, "alarms: %d\n", (int)alarms);
	fflush(stdout);
	exit(0); /* the kept objects stay live into the final dump */
}
