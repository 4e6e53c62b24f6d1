/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * coll_fork.c - a fork test program for tests/preload/collector_fork.sh: the parent keeps 4 MiB
 * live from parent_site, forks, and the child keeps 6 MiB from child_site and exits normally
 * (so its own final dump is written under its own pid), while the parent waits and exits.
 * It checks nothing itself; it writes "parent <pid>" and "child <pid>" plus truth lines.
 *
 * Usage: coll_fork TRUTHFILE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NO_TAIL() __asm__ volatile("" ::: "memory")

static void *keep[64];

__attribute__((noinline)) static void parent_site(void)
{
	for (int i = 0; i < 4; i++) {
		keep[i] = malloc(1u << 20);
		NO_TAIL();
		memset(keep[i], 1, 4096);
	}
}

__attribute__((noinline)) static void child_site(void)
{
	for (int i = 0; i < 6; i++) {
		keep[8 + i] = malloc(1u << 20);
		NO_TAIL();
		memset(keep[8 + i], 2, 4096);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: coll_fork TRUTHFILE\n");
		return 2;
	}
	parent_site();
	NO_TAIL();
	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 3;
	fprintf(f, "parent %d\n", (int)getpid());
	fflush(f);
	pid_t pid = fork();
	if (pid < 0)
		return 3;
	if (pid == 0) {
		child_site();
		NO_TAIL();
		fprintf(f, "child %d\n", (int)getpid());
		fclose(f);
		exit(0); /* exit, not _exit: the child's final dump runs */
	}
	int status = 0;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "coll_fork: child failed (status %#x)\n", status);
		return 1;
	}
	fprintf(f, "site parent_site req=4194304 usable=4194304 col=flat objs=4x1048576\n");
	return fclose(f) == 0 ? 0 : 3;
}
