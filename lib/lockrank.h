/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lockrank.h - the collector's mutexes, ranked, with the order checked in debug builds
 * (jemalloc's witness idea): a thread may take a lock only while it holds none of the same
 * or a lower rank. A violation, which could deadlock a host, aborts the debug build with the
 * two ranks named; release builds compile the check out (HEAPTAP_LOCKRANK undefined).
 *
 * The ranks, outermost first:
 *   LOCKRANK_DUMP     dump.c: serialises dumps and resets
 *   LOCKRANK_CPU      cpuprof.c: the CPU profiler's sessions (a heap dump writes the run CPU
 *                     profile beside it with the dump lock held)
 *   LOCKRANK_CPU_THREADS  cpu_sampler.c: the table of threads with a CPU timer (taken by the
 *                     sessions' drain thread and by threads starting or ending)
 *   LOCKRANK_TABLES   core.c: the stack and live tables
 *   LOCKRANK_THREADS  threads.c: the thread registry
 *   LOCKRANK_ZONE     sampzone.c: the sampled-object zone (held alone, except in the fork
 *                     handlers, which take it last; mmap and munmap are called under it)
 * None is ever held while calling the real allocator, unwinding or writing a file, except
 * the dump lock and the CPU sessions' lock, which are held while a profile is written. Not async-signal-safe (mutexes).
 */
#ifndef HEAPTAP_LIB_LOCKRANK_H
#define HEAPTAP_LIB_LOCKRANK_H

#include <pthread.h>

enum lockrank {
	LOCKRANK_DUMP = 1,
	LOCKRANK_CPU = 2,
	LOCKRANK_CPU_THREADS = 3,
	LOCKRANK_TABLES = 4,
	LOCKRANK_THREADS = 5,
	LOCKRANK_ZONE = 6,
};

struct ranked_mutex {
	pthread_mutex_t m;
	enum lockrank rank;
};

#define RANKED_MUTEX_INITIALIZER(r) {PTHREAD_MUTEX_INITIALIZER, (r)}

void lockrank_lock(struct ranked_mutex *l);
/* 0 when taken, else pthread_mutex_trylock's error (the rank rule still applies). */
int lockrank_trylock(struct ranked_mutex *l);
void lockrank_unlock(struct ranked_mutex *l);

#endif
