/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fleet_host.c - a host program for the fleet tests (delta pulls, /metrics, push): it
 * allocates exactly what it is told, from known functions, when it is told. It reads
 * commands from stdin, one a line, and answers each with "ok <wall-clock ns>" on stdout
 * once done (the time lets a test tell which profile snapshots came after it):
 *   keep N SIZE    N blocks of SIZE bytes from keep_site(), kept live to the end
 *   churn N SIZE   N blocks of SIZE bytes from churn_site(), each freed at once
 *   hostfds PATH   a host that closes every descriptor above 2 (the collector's included) and
 *                  reuses the numbers: creates PATH holding "host data\n" and puts it on every
 *                  number that was open above 2 before; prints "took <count>"
 *   hostcheck PATH prints "host file intact" or "host file changed" (PATH against what hostfds
 *                  wrote, read through each of the taken numbers' file too)
 *   stats          prints "stats <len> <json>" (heaptap_stats_json, when preloaded)
 *   paths N SIZE   N blocks of SIZE bytes, block i from path_site() under a call path of 14
 *                  path_a/path_b frames spelling i's low 14 bits (N <= 16384: N distinct
 *                  stacks), each freed at once (the stack table may recycle them)
 *   quit           exits 0 (also at the end of stdin)
 * It prints "ready <pid>" first. Not a benchmark; allocates nothing else after start.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KEEP_MAX 100000

static void *kept[KEEP_MAX];
static size_t nkept;

__attribute__((noinline)) void *keep_site(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) void *churn_site(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) void *path_site(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

void *path_a(unsigned long bits, int left, size_t n);
void *path_b(unsigned long bits, int left, size_t n);

/* the next frame by bit `left`, then path_site: 2^14 distinct stacks */
static void *path_next(unsigned long bits, int left, size_t n)
{
	if (left == 0)
		return path_site(n);
	return (bits >> (left - 1)) & 1 ? path_b(bits, left - 1, n) : path_a(bits, left - 1, n);
}

__attribute__((noinline)) void *path_a(unsigned long bits, int left, size_t n)
{
	void *p = path_next(bits, left, n);
	__asm__ volatile("" : : "r"(p) : "memory"); /* no tail call: the frame stays */
	return p;
}

__attribute__((noinline)) void *path_b(unsigned long bits, int left, size_t n)
{
	void *p = path_next(bits, left, n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const char host_data[] = "host data\n";

/* closefrom(3) and reuse of the numbers: the descriptors open above 2, then all closed, then
   PATH on each of them. Returns how many, -1 on error. */
static int host_fds(const char *path)
{
	int nums[1024], n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	int dfd = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d)) && n < 1024) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && fd > 2 && fd != dfd)
			nums[n++] = fd;
	}
	closedir(d);
	for (int fd = 3; fd < 65536; fd++)
		close(fd);
	int f = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (f < 0 || write(f, host_data, sizeof host_data - 1) != (ssize_t)sizeof host_data - 1)
		return -1;
	int took = 0;
	for (int i = 0; i < n; i++)
		if (nums[i] != f && dup2(f, nums[i]) == nums[i])
			took++;
	return took;
}

static int host_check(const char *path)
{
	char buf[256];
	int f = open(path, O_RDONLY);
	if (f < 0)
		return 0;
	ssize_t r = read(f, buf, sizeof buf);
	close(f);
	return r == (ssize_t)sizeof host_data - 1 && memcmp(buf, host_data, (size_t)r) == 0;
}

int main(void)
{
	char line[256];
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %ld\n", (long)getpid());
	while (fgets(line, sizeof line, stdin)) {
		char cmd[16], path[200];
		unsigned long n = 0, size = 0;
		if (sscanf(line, "%15s %lu %lu", cmd, &n, &size) < 1)
			continue;
		if (strcmp(cmd, "quit") == 0)
			break;
		if (strcmp(cmd, "hostfds") == 0 && sscanf(line, "%*s %199s", path) == 1) {
			printf("took %d\n", host_fds(path));
		} else if (strcmp(cmd, "hostcheck") == 0 && sscanf(line, "%*s %199s", path) == 1) {
			printf("host file %s\n", host_check(path) ? "intact" : "changed");
		} else if (strcmp(cmd, "stats") == 0) {
			long (*st)(char *, size_t) = (long (*)(char *, size_t))dlsym(RTLD_DEFAULT, "heaptap_stats_json");
			static char js[65536];
			long len = st ? st(js, sizeof js) : -1;
			if (len > 0 && (size_t)len < sizeof js)
				printf("stats %ld %.*s\n", len, (int)len, js);
		} else if (strcmp(cmd, "keep") == 0) {
			for (unsigned long i = 0; i < n && nkept < KEEP_MAX; i++)
				kept[nkept++] = keep_site(size);
		} else if (strcmp(cmd, "churn") == 0) {
			for (unsigned long i = 0; i < n; i++)
				free(churn_site(size));
		} else if (strcmp(cmd, "paths") == 0) {
			for (unsigned long i = 0; i < n; i++)
				free(path_a(i, 14, size));
		} else {
			printf("unknown %s\n", cmd);
			continue;
		}
		printf("ok %lld\n", now_ns());
	}
	return 0;
}
