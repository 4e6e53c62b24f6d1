/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpu_split.c - a program with a known CPU split for the CPU profiler's tests. Units of work
 * (the same loop everywhere, so CPU time is proportional to units):
 *   main thread:     work_a 3 units, work_b 1 unit (3:1 in one thread)
 *   side thread:     work_side 2 units (started before profiling)
 *   late thread:     work_late 2 units (started after profiling started)
 *   thread pool:     work_pool 2 units in 10 short-lived threads (4 at a time)
 * Total 10 units. Usage: cpu_split MODE UNIT_ITERS [OUT]
 *   MODE api:    heaptap_cpu_start/stop/write(OUT) through dlsym
 *   MODE env:    the profiler runs from the environment (cpu_prof, CPUPROFILE)
 *   MODE busy:   installs its own SIGPROF handler first, then calls heaptap_cpu_start
 *                (expects -EBUSY) and prints "start <rc>" and "handler kept <0|1>"
 *   MODE fork:   api, then forks a child that works (child_work 2 units) and writes OUT.child
 *                with heaptap_cpu_write (expects -ENOENT: no profile inherited); prints
 *                "child_write <rc>"
 *   MODE storm:  api at the rate given, while 4 threads malloc/free hard; prints "storm ok"
 *   MODE loop:   until the file OUT exists (at most 100 s): the main thread repeats work_a 3,
 *                work_b 1 and a side thread work_side 2 (for the HTTP endpoints); prints "ready"
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static long unit = 50000000;

static void spin(long n)
{
	unsigned long s = sink;
	for (long i = 0; i < n; i++)
		s = s * 6364136223846793005ul + (unsigned long)i;
	sink = s;
}

/* keeps the caller's frame: no tail call into spin */
#define KEEP() __asm__ volatile("" ::: "memory")

__attribute__((noinline)) void work_a(long units) { spin(units * unit); KEEP(); }
__attribute__((noinline)) void work_b(long units) { spin(units * unit); KEEP(); }
__attribute__((noinline)) void work_side(long units) { spin(units * unit); KEEP(); }
__attribute__((noinline)) void work_late(long units) { spin(units * unit); KEEP(); }
__attribute__((noinline)) void work_pool(long n) { spin(n); KEEP(); }
__attribute__((noinline)) void child_work(long units) { spin(units * unit); KEEP(); }

static void *side_main(void *arg) { work_side(2); return arg; }
static void *late_main(void *arg) { work_late(2); return arg; }
static void *pool_main(void *arg) { work_pool(2 * unit / 10); return arg; }

static int (*cpu_start)(void), (*cpu_stop)(void), (*cpu_write)(const char *);

static void lookup(void)
{
	cpu_start = (int (*)(void))dlsym(RTLD_DEFAULT, "heaptap_cpu_start");
	cpu_stop = (int (*)(void))dlsym(RTLD_DEFAULT, "heaptap_cpu_stop");
	cpu_write = (int (*)(const char *))dlsym(RTLD_DEFAULT, "heaptap_cpu_write");
	if (!cpu_start || !cpu_stop || !cpu_write) {
		fprintf(stderr, "cpu_split: heaptap's CPU API is not in the process\n");
		exit(2);
	}
}

static void run_split(void)
{
	pthread_t side, late, pool[12];
	/* the side thread exists before the profile starts in api mode: it is found in
	   /proc/self/task */
	pthread_create(&side, NULL, side_main, NULL);
	if (cpu_start) {
		int rc = cpu_start();
		if (rc != 0) {
			fprintf(stderr, "cpu_split: heaptap_cpu_start: %d\n", rc);
			exit(3);
		}
	}
	pthread_create(&late, NULL, late_main, NULL);
	work_a(3);
	work_b(1);
	for (int i = 0; i < 10; i += 4) {
		int n = i + 4 <= 10 ? 4 : 10 - i;
		for (int k = i; k < i + n; k++)
			pthread_create(&pool[k], NULL, pool_main, NULL);
		for (int k = i; k < i + n; k++)
			pthread_join(pool[k], NULL);
	}
	pthread_join(side, NULL);
	pthread_join(late, NULL);
}

static void prof_handler(int sig) { (void)sig; }

static volatile int storm_stop;
static void *storm_main(void *arg)
{
	void *keep[64] = {0};
	unsigned long i = 0;
	while (!storm_stop) {
		unsigned k = (unsigned)(i++ % 64);
		free(keep[k]);
		keep[k] = malloc(16 + (i * 7919) % 5000);
	}
	for (int k = 0; k < 64; k++)
		free(keep[k]);
	return arg;
}

static void *loop_side(void *arg)
{
	while (!storm_stop)
		work_side(2);
	return arg;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: cpu_split api|env|busy|fork|storm UNIT_ITERS [OUT]\n");
		return 2;
	}
	const char *mode = argv[1], *out = argc > 3 ? argv[3] : NULL;
	unit = atol(argv[2]);
	if (strcmp(mode, "loop") == 0 && out) {
		pthread_t side;
		pthread_create(&side, NULL, loop_side, (void *)out);
		printf("ready\n");
		fflush(stdout);
		for (time_t end = time(NULL) + 100; access(out, F_OK) != 0 && time(NULL) < end;) {
			work_a(3);
			work_b(1);
		}
		storm_stop = 1;
		pthread_join(side, NULL);
		return 0;
	}
	if (strcmp(mode, "env") == 0) {
		run_split();
		return 0;
	}
	lookup();
	if (strcmp(mode, "busy") == 0) {
		struct sigaction sa, now;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = prof_handler;
		sigaction(SIGPROF, &sa, NULL);
		int rc1 = cpu_start(), rc2 = cpu_start();
		sigaction(SIGPROF, NULL, &now);
		printf("start %d %d\nhandler kept %d\n", rc1, rc2, now.sa_handler == prof_handler);
		return 0;
	}
	if (strcmp(mode, "storm") == 0) {
		pthread_t th[4];
		for (int i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, storm_main, NULL);
		if (cpu_start() != 0)
			return 3;
		work_a(2);
		storm_stop = 1;
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		cpu_stop();
		printf("storm ok write %d\n", out ? cpu_write(out) : 0);
		return 0;
	}
	run_split();
	if (strcmp(mode, "fork") == 0) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			child_work(2);
			char p[4096];
			snprintf(p, sizeof p, "%s.child", out);
			printf("child_write %d\n", cpu_write(p));
			fflush(stdout);
			_exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
	}
	int rc = cpu_stop();
	int wrc = out ? cpu_write(out) : 0;
	printf("stop %d write %d\n", rc, wrc);
	return rc || wrc;
}
