/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lifecycle.c - the process life cycle of lifecycle.h: the library constructor, the
 * process-level start-up on top of core_init, the pthread_atfork handlers (every lock taken
 * in rank order before fork and released in parent and child; the child starts clean), the
 * atexit sequence, and starting the background thread and the HTTP server.
 *
 * It is the only module that knows the whole collector; it holds no profiling state of its
 * own. Nothing here calls the host's malloc directly.
 */
#include "lifecycle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/outbuf.h"
#include "backend.h"
#include "bgthread.h"
#include "cfi.h"
#include "core.h"
#include "cpuprof.h"
#include "doorbell.h"
#include "dump.h"
#include "http_routes.h"
#include "http_server.h"
#include "memwatch.h"
#include "peakprof.h"
#include "options.h"
#include "procinfo.h"
#include "push.h"
#include "sampzone.h"
#include "sys.h"
#include "threads.h"

static int started; /* 0 no, 1 starting or done (atomic) */

/* ---- fork ---- */

static void fork_prepare(void)
{
	tstate_enter();
	dump_fork_prepare(); /* lock ranks, outermost first (lockrank.h) */
	cpuprof_fork_prepare();
	core_fork_prepare();
	threads_fork_prepare();
	sampzone_fork_prepare();
}

static void fork_parent(void)
{
	sampzone_fork_release();
	threads_fork_parent();
	core_fork_release();
	cpuprof_fork_parent();
	dump_fork_parent();
	tstate_leave();
}

static void fork_child(void)
{
	sampzone_fork_release();
	threads_fork_child(&tstate_tls);
	core_fork_release();
	dump_fork_child();
	doorbell_fork_child(); /* no requests inherited; the parent's thread does not exist here */
	bgthread_fork_child();
	memwatch_fork_child();
	cfi_fork_child();
	http_server_fork_child(); /* the parent's server is not the child's */
	procinfo_fork_child();
	push_fork_child();
	cpuprof_fork_child();     /* no running CPU profile unless cpu_fork asks */
	tstate_leave();
}

/* ---- exit ---- */

/*
 * prof_leak_error's exit: the status becomes 1, after the program's buffered output is out and
 * with one line saying why. It runs inside exit()'s handlers (heaptap's was registered at
 * start-up, so the program's own have run), where exit() would next flush stdio and call
 * _exit with the program's status; fcloseall() is that very flush (glibc: the same internal
 * call, _IO_cleanup, exit() makes next), so nothing the program wrote is lost, and then
 * _exit(1). The one stdio call of the collector (docs/INTERNALS.md "Host-safety rules").
 */
static void exit_leak_error(uint64_t leaked)
{
	fcloseall();
	char line[200];
	struct outbuf ob;
	outbuf_init(&ob, line, sizeof line - 1, -1);
	outbuf_puts(&ob, "heaptap: prof_leak_error: exit status 1, because ~");
	outbuf_u64(&ob, leaked);
	outbuf_puts(&ob, " bytes are still allocated at exit (the leak summary above)\n");
	(void)write_all(2, line, ob.len);
	_exit(1);
}

static void at_exit(void)
{
	tstate_enter();
	const struct options *o = options_get();
	char name[DUMP_PATH_MAX];
	name[0] = 0;
	bgthread_drain();
	dump_set_exiting();
	if (o->prof_peak && o->prof_prefix[0])
		dump_named(TRIG_PEAK, NULL, 0);
	if (o->prof_final && o->prof_prefix[0])
		dump_named(TRIG_FINAL, name, sizeof name);
	push_at_exit(); /* the last interval, and what the queue still holds */
	if (o->prof_leak) {
		uint64_t leaked = dump_leak_summary(name);
		if (o->prof_leak_error && leaked > 0)
			exit_leak_error(leaked);
	}
	tstate_leave();
}

/* ---- start ---- */

static void on_dump_signal(int sig)
{
	(void)sig;
	doorbell_ring(TRIG_SIGNAL);
}

/* The doorbell, the dump signal and the background thread, for the configured triggers. */
static void start_triggers(const struct options *o)
{
	if (doorbell_init() != 0 || !o->prof_prefix[0])
		return; /* no way to wake the thread, or nowhere to write automatic dumps */
	if (o->prof_signal > 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_dump_signal;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(o->prof_signal, &sa, NULL);
	}
	if (o->lg_prof_interval >= 0 || o->prof_gdump || o->prof_time_interval_ms > 0 ||
	    o->prof_signal > 0 || o->prof_oom) {
		/* the hook restarts it lazily where it does not run (a forked child) */
		core_set_hook(bgthread_ensure);
		bgthread_ensure();
	}
}

/* Calls of malloc this thread made that heaptap's interposer saw (the fast path's counter and
   the slow path's count of calls from inside the profiler). */
static uint64_t malloc_calls_seen(void)
{
	return __atomic_load_n(&core.reentrant, __ATOMIC_RELAXED) + tstate_tls.calls[FN_MALLOC];
}

/*
 * Says once when the process's malloc is not heaptap's: an allocator preloaded before
 * libheaptap.so (LD_PRELOAD="libjemalloc.so libheaptap.so") or linked into the program binds
 * first, and heaptap would write empty dumps without a word. It calls the malloc the program
 * would call and looks whether heaptap saw it (comparing addresses is not enough: a non-PIE
 * program's PLT stub is malloc's canonical address). Called inside the reentrancy guard.
 */
static void check_interposition(void)
{
	void *(*their_malloc)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "malloc");
	void (*their_free)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "free");
	if (!their_malloc || !their_free)
		return;
	uint64_t before = malloc_calls_seen();
	void *p = their_malloc(40);
	uint64_t after = malloc_calls_seen();
	their_free(p);
	Dl_info theirs;
	if (after != before || !dladdr((void *)their_malloc, &theirs))
		return;
	sys_log("the program's malloc is ", theirs.dli_fname && *theirs.dli_fname ? theirs.dli_fname
	                                                                            : "the program's own",
	        ", not heaptap's: its allocations are not seen (load libheaptap.so first in"
	        " LD_PRELOAD, or see docs/MIGRATING.md for programs with their own allocator)");
}

int lifecycle_http_start(const char *addr)
{
	tstate_enter(); /* dlsym and pthread_create allocate: not the host's allocations */
	backend_choose();
	const struct options *o = options_get();
	int rc = http_server_start(addr, o->http_token, &http_routes_app);
	tstate_leave();
	return rc;
}

void lifecycle_init(void)
{
	if (!core_init())
		return; /* re-entered from the core's own initialisation */
	int expect = 0;
	if (!__atomic_compare_exchange_n(&started, &expect, 1, 0, __ATOMIC_ACQ_REL,
	                                 __ATOMIC_ACQUIRE))
		return;
	tstate_enter();
	const struct options *o = options_get();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	if (core.enabled) {
		backend_choose(); /* the program's own jemalloc, when it has one that can profile */
		if (o->prof_peak) {
			core_lock_tables();
			peakprof_enable_locked(core.live_bytes_fp);
			core_unlock_tables();
		}
		atexit(at_exit);
		start_triggers(o);
		push_start();
		if (push_enabled()) {
			/* the push client runs on the background thread */
			core_set_hook(bgthread_ensure);
			bgthread_ensure();
		}
		if (backend_get() != &jemalloc_backend)
			check_interposition(); /* jemalloc's profiler sees what heaptap's malloc does not */
	}
	/* the CPU profile of the run (cpu_prof, CPUPROFILE): independent of heap profiling */
	cpuprof_init();
	/* also with prof:false: the control plane then drives jemalloc's profiler */
	if (o->http[0])
		lifecycle_http_start(o->http);
	tstate_leave();
}

#ifndef HEAPTAP_NO_CONSTRUCTOR
/* The library's one constructor: start-up from a constructor rather than from inside the first
   malloc, which may run while the loader holds its locks, where creating a thread is not safe.
   (Unit tests that link lib/ build this file without it and call lifecycle_init themselves.) */
__attribute__((constructor)) static void on_load(void)
{
	lifecycle_init();
}
#endif
