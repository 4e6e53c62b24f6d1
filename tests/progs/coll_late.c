/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * coll_late.c - allocates after a profiler's final dump, for tests/preload/collector_early_late.sh:
 * an atexit handler (registered in main, and one registered from inside it while exiting) and
 * a destructor each malloc, realloc and free objects of every size class range, then say so on
 * stderr with write(2). main keeps 1 MiB live from main_keep. Checks nothing itself.
 *
 * Usage: coll_late
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NO_TAIL() __asm__ volatile("" ::: "memory")

static void *kept;

static void say(const char *s)
{
	if (write(2, s, strlen(s)) < 0)
		_exit(3);
}

static void churn(void)
{
	for (int i = 0; i < 200; i++) {
		size_t n = (size_t)16 << (i % 18); /* 16 B .. 2 MiB */
		void *p = malloc(n);
		if (!p)
			_exit(4);
		memset(p, i, 16);
		p = realloc(p, n * 2);
		if (!p)
			_exit(4);
		free(p);
		free(calloc(4, n / 4 + 1));
	}
}

static void late_inner(void)
{
	churn();
	say("late: nested atexit ok\n");
}

static void late_atexit(void)
{
	churn();
	atexit(late_inner);
	say("late: atexit ok\n");
}

__attribute__((destructor)) static void late_destructor(void)
{
	churn();
	say("late: destructor ok\n");
}

__attribute__((noinline)) static void main_keep(void)
{
	kept = malloc(1u << 20);
	NO_TAIL();
	memset(kept, 1, 4096);
}

int main(void)
{
	atexit(late_atexit);
	main_keep();
	NO_TAIL();
	return 0;
}
