/*
 * http_host.c - a host program for the HTTP control-plane tests: allocates a known amount
 * from known functions (32 x 1 MiB live from hog_alloc, 1000 x 1 KiB live from small_alloc),
 * forks a child that idles (with HTTP_HOST_CHILD_ADDR set, it first calls heaptap_http_start
 * on that address and prints "child api <rc>"), prints "ready <child pid>" and waits until the stop file named
 * by argv[1] appears (at most 100 s). With argv[2], it first calls heaptap_http_start(argv[2])
 * through dlsym and prints "api <rc>" for each of two calls. With HTTP_HOST_GO set, it waits
 * for that file to appear before allocating (so a test can switch profiling on first).
 * Not a benchmark.
 */
#include <dlfcn.h>
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
