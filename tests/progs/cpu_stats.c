/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpu_stats.c - a CPU-busy program for the tests of the CPU profiler's statistics and of the
 * CPU profiles written beside heap dumps. Not a test by itself: the scripts in tests/preload
 * and tests/e2e check what it prints and writes. Usage: cpu_stats MODE UNIT_ITERS [PATH [SUFFIX]]
 *   MODE stats:  two threads spin (busy_main 2 units, busy_side 2 units) while the run profile
 *                runs (HEAPTAP_CONF cpu_prof); then heaptap_cpu_write(PATH) (an unwritable
 *                path: "bad_write <rc>"), then prints "cpu_seconds <s>" (its own CPU time,
 *                CLOCK_PROCESS_CPUTIME_ID) and the statistics JSON on one line
 *   MODE dumps:  busy_main 1 unit, heaptap_dump(NULL), busy_main 2 more units,
 *                heaptap_dump(NULL); prints "dump <rc>" for each (the CPU profiles go beside
 *                the heap dumps when cpu_prof is on)
 *   MODE signal: busy_main 1 unit, raise(SIGUSR2) (prof_signal:USR2 dumps on heaptap's
 *                background thread), then waits (at most 60 s) until a file ending in
 *                SUFFIX appears in directory PATH; prints "signal dump seen" or "timeout"
 */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;
static long unit = 50000000;

static void spin(long n)
{
	unsigned long s = sink;
	for (long i = 0; i < n; i++)
		s = s * 6364136223846793005ul + (unsigned long)i;
	sink = s;
}

#define KEEP() __asm__ volatile("" ::: "memory")

__attribute__((noinline)) void busy_main(long units) { spin(units * unit); KEEP(); }
__attribute__((noinline)) void busy_side(long units) { spin(units * unit); KEEP(); }

static void *side_main(void *arg) { busy_side(2); return arg; }

static void *sym(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	if (!p) {
		fprintf(stderr, "cpu_stats: %s is not in the process\n", name);
		exit(2);
	}
	return p;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: cpu_stats stats|dumps|signal UNIT_ITERS [PATH [SUFFIX]]\n");
		return 2;
	}
	unit = atol(argv[2]);
	if (strcmp(argv[1], "stats") == 0 && argc > 3) {
		int (*cpu_write)(const char *) = (int (*)(const char *))sym("heaptap_cpu_write");
		long (*stats)(char *, size_t) = (long (*)(char *, size_t))sym("heaptap_stats_json");
		pthread_t side;
		pthread_create(&side, NULL, side_main, NULL);
		busy_main(2);
		pthread_join(side, NULL);
		printf("bad_write %d\n", cpu_write(argv[3]));
		struct timespec ts;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		printf("cpu_seconds %.3f\n", (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
		static char buf[1 << 16];
		long n = stats(buf, sizeof buf);
		if (n < 0 || (size_t)n >= sizeof buf)
			return 3;
		printf("%s\n", buf);
		return 0;
	}
	if (strcmp(argv[1], "dumps") == 0) {
		int (*dump)(const char *) = (int (*)(const char *))sym("heaptap_dump");
		busy_main(1);
		printf("dump %d\n", dump(NULL));
		busy_main(2);
		printf("dump %d\n", dump(NULL));
		return 0;
	}
	if (strcmp(argv[1], "signal") == 0 && argc > 4) {
		busy_main(1);
		raise(SIGUSR2);
		for (int i = 0; i < 6000; i++) {
			DIR *d = opendir(argv[3]);
			struct dirent *e;
			size_t k = strlen(argv[4]);
			int seen = 0;
			while (d && (e = readdir(d))) {
				size_t n = strlen(e->d_name);
				seen |= n > k && strcmp(e->d_name + n - k, argv[4]) == 0;
			}
			if (d)
				closedir(d);
			if (seen) {
				printf("signal dump seen\n");
				return 0;
			}
			struct timespec ts = {0, 10 * 1000000};
			nanosleep(&ts, NULL);
		}
		printf("timeout\n");
		return 1;
	}
	fprintf(stderr, "cpu_stats: unknown mode %s\n", argv[1]);
	return 2;
}
