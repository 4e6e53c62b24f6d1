/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_lockrank.c - unit test of the ranked mutexes (lib/lockrank.c, built with
 * -DHEAPTAP_LOCKRANK as every unit test is): locks taken in rank order (dump, CPU sessions,
 * CPU threads, tables, threads) and a trylock in order work; taking a lock of the same or a
 * higher rank than one held aborts the process with a message naming the ranks (checked in
 * forked children), the CPU ranks included (sessions under the tables, a dump under the
 * sessions).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/lockrank.h"
#include "../../lib/tstate.h"
#include "check.h"

static struct ranked_mutex dump_l = RANKED_MUTEX_INITIALIZER(LOCKRANK_DUMP);
static struct ranked_mutex cpu_l = RANKED_MUTEX_INITIALIZER(LOCKRANK_CPU);
static struct ranked_mutex cputhr_l = RANKED_MUTEX_INITIALIZER(LOCKRANK_CPU_THREADS);
static struct ranked_mutex tables_l = RANKED_MUTEX_INITIALIZER(LOCKRANK_TABLES);
static struct ranked_mutex threads_l = RANKED_MUTEX_INITIALIZER(LOCKRANK_THREADS);

/* Runs fn in a child with stderr to a pipe; returns its wait status, the message in msg. */
static int in_child(void (*fn)(void), char *msg, size_t cap)
{
	int p[2];
	if (pipe(p) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 2);
		fn();
		_exit(0);
	}
	close(p[1]);
	ssize_t n = read(p[0], msg, cap - 1);
	msg[n > 0 ? n : 0] = 0;
	close(p[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	return st;
}

static void in_order(void)
{
	lockrank_lock(&dump_l);
	lockrank_lock(&cpu_l);   /* a heap dump writes the CPU profile beside it */
	lockrank_lock(&cputhr_l);
	lockrank_lock(&tables_l);
	if (lockrank_trylock(&threads_l) != 0)
		_exit(3);
	lockrank_unlock(&threads_l);
	lockrank_unlock(&tables_l);
	lockrank_unlock(&cputhr_l);
	lockrank_unlock(&cpu_l);
	lockrank_unlock(&dump_l);
	/* released: the lower ranks may be taken again */
	lockrank_lock(&tables_l);
	lockrank_unlock(&tables_l);
}

static void inverted(void)
{
	lockrank_lock(&tables_l);
	lockrank_lock(&dump_l); /* dump ranks above tables: must abort */
}

static void cpu_under_tables(void)
{
	lockrank_lock(&tables_l);
	lockrank_lock(&cpu_l); /* the CPU sessions rank above the tables: must abort */
}

static void dump_under_cpu(void)
{
	lockrank_lock(&cpu_l);
	lockrank_lock(&dump_l); /* a CPU profile write must not start a heap dump */
}

static void same_rank(void)
{
	lockrank_lock(&threads_l);
	lockrank_trylock(&threads_l);
}

int main(void)
{
	char msg[256];
	int st = in_child(in_order, msg, sizeof msg);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "in order: status %d, '%s'", st, msg);
	CHECK(tstate_tls.locks_held == 0);

	st = in_child(inverted, msg, sizeof msg);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "inverted: status %d", st);
	CHECK(strstr(msg, "lock order violated: taking rank 1 while holding ranks mask 0x10") != NULL,
	      "message '%s'", msg);

	st = in_child(cpu_under_tables, msg, sizeof msg);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "cpu under tables: status %d", st);
	CHECK(strstr(msg, "taking rank 2 while holding ranks mask 0x10") != NULL, "message '%s'", msg);
	st = in_child(dump_under_cpu, msg, sizeof msg);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "dump under cpu: status %d", st);
	CHECK(strstr(msg, "taking rank 1 while holding ranks mask 0x4") != NULL, "message '%s'", msg);

	st = in_child(same_rank, msg, sizeof msg);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "same rank: status %d", st);
	CHECK(strstr(msg, "taking rank 5") != NULL, "message '%s'", msg);
	return check_finish("lib_lockrank");
}
