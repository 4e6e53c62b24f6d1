/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http_host.c - a host program for the HTTP control-plane tests: allocates a known amount
 * from known functions (32 x 1 MiB live from hog_alloc, 1000 x 1 KiB live from small_alloc),
 * forks a child that idles (with HTTP_HOST_CHILD_ADDR set, it first calls heaptap_http_start
 * on that address and prints "child api <rc>"), prints "ready <child pid>" and waits until the stop file named
 * by argv[1] appears (at most 100 s). With argv[2], it first calls heaptap_http_start(argv[2])
 * through dlsym and prints "api <rc>" for each of two calls. With HTTP_HOST_GO set, it waits
 * for that file to appear before allocating (so a test can switch profiling on first). With
 * HTTP_HOST_CLOSEFDS, once that file appears it closes descriptors 3..1023 like a daemon, opens
 * 64 files of its own (reusing the numbers), and 2 s later prints whether they are intact.
 * Not a benchmark.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HOG_BLOCKS 32
#define SMALL_BLOCKS 1000

static void *hog[HOG_BLOCKS];
static void *small[SMALL_BLOCKS];

__attribute__((noinline)) void *hog_alloc(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) void *small_alloc(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static int wait_for(const char *path, int max_ms)
{
	struct timespec ts = {0, 50 * 1000 * 1000};
	for (int t = 0; t < max_ms; t += 50) {
		if (access(path, F_OK) == 0)
			return 0;
		nanosleep(&ts, NULL);
	}
	return -1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: http_host STOPFILE [API-ADDR]\n");
		return 2;
	}
	if (argc > 2) {
		int (*start)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "heaptap_http_start");
		if (!start) {
			printf("api missing\n");
		} else {
			printf("api %d\n", start(argv[2]));
			printf("api %d\n", start(argv[2]));
		}
		fflush(stdout);
	}
	const char *go = getenv("HTTP_HOST_GO");
	if (go) {
		printf("waiting\n");
		fflush(stdout);
		if (wait_for(go, 100000) != 0)
			return 1;
	}
	for (int i = 0; i < HOG_BLOCKS; i++)
		hog[i] = hog_alloc(1 << 20);
	for (int i = 0; i < SMALL_BLOCKS; i++)
		small[i] = small_alloc(1024);
	pid_t child = fork();
	if (child == 0) {
		/* the child has no server; with HTTP_HOST_CHILD_ADDR it starts its own */
		const char *caddr = getenv("HTTP_HOST_CHILD_ADDR");
		int (*cstart)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "heaptap_http_start");
		if (caddr && cstart) {
			printf("child api %d\n", cstart(caddr));
			fflush(stdout);
		}
		wait_for(argv[1], 100000);
		_exit(0);
	}
	printf("ready %d\n", (int)child);
	fflush(stdout);
	const char *closefds = getenv("HTTP_HOST_CLOSEFDS");
	if (closefds && wait_for(closefds, 100000) == 0) {
		/* behave like a daemon that closes every descriptor it did not open, then reuses
		   the numbers for its own files; they must come back intact */
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		char path[4096], want[64], got[64];
		int fds[64];
		for (int i = 0; i < 64; i++) {
			snprintf(path, sizeof path, "%s.f%d", closefds, i);
			fds[i] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
			snprintf(want, sizeof want, "host data %d\n", i);
			if (fds[i] < 0 || write(fds[i], want, strlen(want)) != (ssize_t)strlen(want))
				return 3;
		}
		printf("closed\n");
		fflush(stdout);
		struct timespec ts = {2, 0};
		nanosleep(&ts, NULL);
		int intact = 1;
		for (int i = 0; i < 64; i++) {
			snprintf(want, sizeof want, "host data %d\n", i);
			ssize_t n = pread(fds[i], got, sizeof got - 1, 0);
			got[n > 0 ? n : 0] = 0;
			intact &= strcmp(got, want) == 0;
			close(fds[i]);
		}
		printf("hostfiles %s\n", intact ? "intact" : "CLOBBERED");
		fflush(stdout);
	}
	int rc = wait_for(argv[1], 100000);
	for (int i = 0; i < HOG_BLOCKS; i++)
		free(hog[i]);
	for (int i = 0; i < SMALL_BLOCKS; i++)
		free(small[i]);
	int status = 0;
	if (child > 0)
		waitpid(child, &status, 0);
	return rc == 0 ? 0 : 1;
}
