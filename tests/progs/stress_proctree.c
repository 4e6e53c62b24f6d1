/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stress_proctree.c - process trees under the collector: fork without exec (both sides keep
 * allocating in their own named sites), vfork+exec, posix_spawn, and a fork+exec chain of this
 * same program three deep. Every process prints one line "pid <pid> role <role>" to stdout
 * after its allocations, so a test can match dumps to processes; the parent waits for all.
 * Usage: stress_proctree [chain N]
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
void *tree_keep[64]; /* global and read below, so the compiler keeps every allocation */

__attribute__((noinline)) static void tree_parent_site(void)
{
	for (int i = 0; i < 16; i++)
		tree_keep[i] = calloc(1, 256 << 10);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void tree_child_site(void)
{
	for (int i = 16; i < 40; i++)
		tree_keep[i] = calloc(1, 256 << 10);
	__asm__ volatile("" ::: "memory");
}

static void say(const char *role)
{
	int live = 0;
	for (int i = 0; i < 64; i++)
		live += tree_keep[i] != NULL;
	printf("pid %d role %s blocks %d\n", (int)getpid(), role, live);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "chain")) {
		int n = atoi(argv[2]);
		tree_child_site();
		say("chain");
		if (n > 1) {
			char arg[16];
			snprintf(arg, sizeof arg, "%d", n - 1);
			pid_t p = fork();
			if (p == 0) {
				execl("/proc/self/exe", argv[0], "chain", arg, (char *)NULL);
				_exit(127);
			}
			int st;
			waitpid(p, &st, 0);
		}
		exit(0);
	}
	tree_parent_site();
	/* fork without exec: the child allocates in its own site and exits normally. */
	pid_t c = fork();
	if (c == 0) {
		tree_child_site();
		say("forked");
		exit(0);
	}
	/* vfork + exec of a plain program. */
	pid_t v = vfork();
	if (v == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	/* posix_spawn of this program as a chain of three fork+exec'd processes. */
	pid_t s;
	char *args[] = {argv[0], "chain", "3", NULL};
	if (posix_spawn(&s, "/proc/self/exe", NULL, NULL, args, environ) != 0)
		return 1;
	int st, bad = 0;
	pid_t kids[] = {c, v, s};
	for (int i = 0; i < 3; i++) {
		waitpid(kids[i], &st, 0);
		bad += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	say("parent");
	exit(bad);
}
