/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpuprof.c - the CPU profiler's sessions of cpuprof.h: the run profile and the HTTP window,
 * their stack tables (stacktab.c instances of their own: a stack entry's alloc_objs_fp holds
 * its ticks here), the drain thread, the cpusrc.h view the writers read, and the files.
 *
 * One mutex (the sessions' lock) guards everything here; it is taken before the sampler's
 * thread-table lock, never in a signal handler, and not held while the host's code runs. Not
 * the signal handler (cpu_sampler.c). No host malloc: tables and maps are mmap'd.
 */
#include "cpuprof.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h> /* rename */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/outbuf.h"
#include "../profile/inproc/cpu_pprof_write.h"
#include "../profile/inproc/gperf_cpu_write.h"
#include "cpu_sampler.h"
#include "dumpfmt.h"
#include "lockrank.h"
#include "maps.h"
#include "options.h"
#include "stacktab.h"
#include "safefile.h"
#include "sys.h"
#include "tstate.h"

struct session {
	int on;                  /* collecting */
	int have;                /* a table exists (running or stopped, not yet forgotten) */
	struct stacktab tab;
	int64_t start_wall, start_mono, stop_mono;
	unsigned hz;
	const char *timer;
	struct cpu_losses l;     /* what the drain counted */
	struct cpu_sampler_counts base, end; /* the sampler's counters at start and stop */
};

static struct ranked_mutex lock = RANKED_MUTEX_INITIALIZER(LOCKRANK_CPU);
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static struct session run_s, win_s;
static int win_state;            /* 0 none, 1 running, 2 finished */
static int64_t win_end_ms;
static enum cpuprof_format win_fmt;
static int drain_started;
static int64_t last_rescan;
static int log_once_write, log_once_start;
static int owner_pid;            /* the process whose options named cpu_file */
static uint64_t n_written, n_write_failed; /* atomic: profiles written (files, windows), failures */

static struct maps_snapshot maps;
static char exe_path[4096];
static char cmdline[8192];

/* ---- collecting ---- */

static void take(void *ctx, const uintptr_t *pcs, uint32_t depth, uint64_t ticks, unsigned flags)
{
	(void)ctx;
	struct session *all[2] = {&run_s, &win_s};
	for (int i = 0; i < 2; i++) {
		struct session *s = all[i];
		if (!s->on)
			continue;
		s->l.signals++;
		s->l.overruns += ticks - 1;
		s->l.unwind_fp += (flags & CPU_SAMPLE_FP) != 0;
		s->l.truncated += (flags & CPU_SAMPLE_TRUNC) != 0;
		int64_t id = stacktab_intern(&s->tab, pcs, depth);
		if (id < 0) {
			s->l.lost_table += ticks;
			continue;
		}
		stacktab_get(&s->tab, (uint32_t)id)->alloc_objs_fp += ticks;
	}
}

static void drain_locked(void)
{
	cpu_sampler_drain(take, NULL);
}

void cpuprof_rewrite_pcs(uintptr_t (*map)(uintptr_t pc, const void *ctx), const void *ctx)
{
	lockrank_lock(&lock);
	if (run_s.on || win_s.on)
		drain_locked(); /* the shards' frames are raw PCs too */
	struct session *all[2] = {&run_s, &win_s};
	for (int i = 0; i < 2; i++)
		if (all[i]->have)
			(void)stacktab_rewrite_pcs(&all[i]->tab, map, ctx);
	lockrank_unlock(&lock);
}

static void *drain_main(void *arg)
{
	(void)arg;
	tstate_enter(); /* nothing this thread does is the host's */
	lockrank_lock(&lock);
	for (;;) {
		while (!run_s.on && !win_s.on)
			pthread_cond_wait(&wake, &lock.m);
		drain_locked();
		int64_t now = sys_mono_ns();
		if (now - last_rescan >= 250 * 1000000ll) {
			last_rescan = now;
			cpu_sampler_rescan(); /* threads made without pthread_create, threads gone */
		}
		unsigned hz = run_s.on ? run_s.hz : win_s.hz;
		lockrank_unlock(&lock);
		/* a shard holds 64 samples: drain well before a few busy threads fill one */
		sys_sleep_ms(hz >= 500 ? 10 : 50);
		lockrank_lock(&lock);
	}
	return NULL;
}

/* Starts session s (lock held): its table, then the sampler if it does not run. */
static int session_start(struct session *s)
{
	const struct options *o = options_get();
	if (!run_s.on && !win_s.on) {
		int rc = cpu_sampler_start(o->cpu_hz, o->cpu_signal, o->cpu_timer);
		if (rc < 0 && rc != -EALREADY)
			return rc;
	}
	if (s->have)
		stacktab_release(&s->tab);
	memset(s, 0, sizeof *s);
	if (stacktab_init(&s->tab, 0, CPU_SAMPLER_FRAMES) != 0) {
		if (!run_s.on && !win_s.on)
			cpu_sampler_stop();
		return -ENOMEM;
	}
	s->have = 1;
	s->on = 1;
	s->hz = o->cpu_hz;
	s->timer = cpu_sampler_timer_name();
	s->start_wall = sys_now_ns();
	s->start_mono = sys_mono_ns();
	cpu_sampler_get_counts(&s->base);
	if (!drain_started) {
		drain_started = 1;
		tstate_enter();
		if (sys_thread_start(drain_main, NULL) != 0) {
			drain_started = 0;
			sys_log_once(&log_once_start, "cpu: cannot start the drain thread",
			             " (CPU samples are only collected when a profile is written)", NULL);
		}
		tstate_leave();
	}
	pthread_cond_signal(&wake);
	return 0;
}

/* Stops session s (lock held): what is in the rings goes in first. */
static void session_stop(struct session *s)
{
	if (!s->on)
		return;
	struct session *other = s == &run_s ? &win_s : &run_s;
	if (!other->on)
		cpu_sampler_stop();
	drain_locked();
	s->on = 0;
	s->stop_mono = sys_mono_ns();
	cpu_sampler_get_counts(&s->end);
}

/* ---- writing ---- */

static int for_each(const struct cpu_source *src, int (*fn)(void *, const struct cpu_stack *),
                    void *ctx)
{
	const struct session *s = src->priv;
	for (uint32_t id = 0; id < stacktab_id_end(&s->tab); id++) {
		const struct stack_entry *e = stacktab_get(&s->tab, id);
		if (e->depth == 0 || e->alloc_objs_fp == 0)
			continue;
		struct cpu_stack st = {stacktab_pcs(&s->tab, e), e->depth, e->alloc_objs_fp};
		int rc = fn(ctx, &st);
		if (rc)
			return rc;
	}
	return 0;
}

static void read_identity(void)
{
	sys_process_identity(exe_path, sizeof exe_path, cmdline, sizeof cmdline);
}

/* Writes session s (lock held) to fd in fmt. */
static int session_write(struct session *s, int fd, enum cpuprof_format fmt)
{
	if (s->on)
		drain_locked();
	read_identity();
	(void)maps_snapshot_take(&maps, exe_path);
	struct cpu_sampler_counts now;
	if (s->on)
		cpu_sampler_get_counts(&now);
	else
		now = s->end;
	struct cpu_source src;
	memset(&src, 0, sizeof src);
	src.hz = s->hz;
	src.period_ns = 1000000000ull / s->hz;
	src.timer = s->timer;
	src.start_ns = s->start_wall;
	src.duration_ns = (s->on ? sys_mono_ns() : s->stop_mono) - s->start_mono;
	src.pid = getpid();
	src.exe_path = exe_path;
	src.cmdline = cmdline;
	src.losses = s->l;
	src.losses.lost_full = now.lost_full - s->base.lost_full;
	src.losses.lost_inside = now.lost_inside - s->base.lost_inside;
	src.losses.threads = now.threads - s->base.threads;
	src.losses.threads_failed = now.threads_failed - s->base.threads_failed;
	src.maps_text = maps.text;
	src.maps_len = maps.len;
	src.mappings = maps.maps;
	src.nmappings = maps.n;
	src.for_each_stack = for_each;
	src.priv = s;
	return fmt == CPUPROF_GPERF ? gperf_cpu_write(&src, fd) : cpu_pprof_write(&src, fd);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

struct fill_ctx {
	struct session *s;
	enum cpuprof_format fmt;
};

static int fill_session(void *ctx, int fd)
{
	struct fill_ctx *f = ctx;
	return session_write(f->s, fd, f->fmt);
}

/* Writes s to exactly path, as the heap dumps are written (safefile.h; lock held). */
static int write_path(struct session *s, const char *path, enum cpuprof_format fmt)
{
	struct fill_ctx fc = {s, fmt};
	int rc = safefile_write(path, (mode_t)options_get()->prof_dump_mode, 0, fill_session, &fc, NULL);
	__atomic_fetch_add(rc == 0 ? &n_written : &n_write_failed, 1, __ATOMIC_RELAXED);
	if (rc != 0)
		sys_log_once(&log_once_write, "cpu: cannot write the CPU profile ", path,
		             " (further errors are not reported)");
	return rc;
}

static enum cpuprof_format format_of(const char *path)
{
	return ends_with(path, ".pb") || ends_with(path, ".pb.gz") ? CPUPROF_PPROF : CPUPROF_GPERF;
}

/* ---- the run profile ---- */

int cpuprof_run_start(void)
{
	lockrank_lock(&lock);
	int rc = run_s.on ? -EALREADY : session_start(&run_s);
	lockrank_unlock(&lock);
	return rc;
}

int cpuprof_run_stop(void)
{
	lockrank_lock(&lock);
	int rc = run_s.on ? 0 : -ENOENT;
	session_stop(&run_s);
	lockrank_unlock(&lock);
	return rc;
}

int cpuprof_run_write(const char *path)
{
	lockrank_lock(&lock);
	int rc = run_s.have ? write_path(&run_s, path, format_of(path)) : -ENOENT;
	lockrank_unlock(&lock);
	return rc;
}

void cpuprof_init(void)
{
	const struct options *o = options_get();
	owner_pid = getpid();
	if (!o->cpu_prof && !o->cpu_file[0])
		return;
	int rc = cpuprof_run_start();
	if (rc == 0)
		atexit(cpuprof_at_exit);
	if (rc < 0 && rc != -EBUSY) {
		char num[24];
		fmt_u64(num, (uint64_t)-rc);
		sys_log("cpu: the CPU profile of the run cannot start: errno ", num, NULL);
	}
}

/* The extensions of the run profile's files by format. */
static const struct {
	enum cpuprof_format fmt;
	const char *ext;
} run_kinds[] = {{CPUPROF_PPROF, ".cpu.pb"}, {CPUPROF_GPERF, ".cpu.prof"}};

/* The run profile's files at exit (lock held): cpu_file, or <prefix>.<pid>.cpu.pb / .prof. */
static void write_run_files(void)
{
	const struct options *o = options_get();
	char path[DUMP_PATH_MAX];
	struct outbuf ob;
	if (o->cpu_file[0]) {
		/* a child that continues the profile (cpu_fork) writes FILE_<pid>, as gperftools'
		   children do, instead of overwriting its parent's */
		outbuf_init(&ob, path, sizeof path - 1, -1);
		outbuf_puts(&ob, o->cpu_file);
		if (getpid() != owner_pid) {
			outbuf_putc(&ob, '_');
			outbuf_u64(&ob, (uint64_t)getpid());
		}
		path[ob.len] = 0;
		if (!ob.truncated)
			write_path(&run_s, path, format_of(o->cpu_file));
		return;
	}
	const char *prefix = o->cpu_prefix[0] ? o->cpu_prefix : o->prof_prefix;
	if (!prefix[0])
		return;
	for (size_t i = 0; i < sizeof run_kinds / sizeof run_kinds[0]; i++) {
		if (!(o->cpu_format & run_kinds[i].fmt))
			continue;
		outbuf_init(&ob, path, sizeof path - 1, -1);
		outbuf_puts(&ob, prefix);
		outbuf_putc(&ob, '.');
		outbuf_u64(&ob, (uint64_t)getpid());
		outbuf_puts(&ob, run_kinds[i].ext);
		path[ob.len] = 0;
		if (!ob.truncated)
			write_path(&run_s, path, run_kinds[i].fmt);
	}
}

/* <base><extension of run_kinds[i]> into path[DUMP_PATH_MAX]: 0, or -ENAMETOOLONG. */
static int beside_path(char *path, const char *base, size_t i)
{
	struct outbuf ob;
	outbuf_init(&ob, path, DUMP_PATH_MAX - 1, -1);
	outbuf_puts(&ob, base);
	outbuf_puts(&ob, run_kinds[i].ext);
	path[ob.len] = 0;
	return ob.truncated ? -ENAMETOOLONG : 0;
}

int cpuprof_dump_beside(const char *base)
{
	const struct options *o = options_get();
	/* the formats of the run profile's own file: CPUPROFILE's by its name, else cpu_format */
	unsigned fmts = o->cpu_file[0] ? (unsigned)format_of(o->cpu_file) : o->cpu_format;
	lockrank_lock(&lock);
	int rc = run_s.on ? 0 : -ENOENT;
	for (size_t i = 0; rc == 0 && i < sizeof run_kinds / sizeof run_kinds[0]; i++) {
		if (!(fmts & run_kinds[i].fmt))
			continue;
		char path[DUMP_PATH_MAX];
		rc = beside_path(path, base, i);
		if (rc == 0)
			rc = write_path(&run_s, path, run_kinds[i].fmt);
	}
	lockrank_unlock(&lock);
	return rc;
}

void cpuprof_unlink_beside(const char *base)
{
	for (size_t i = 0; i < sizeof run_kinds / sizeof run_kinds[0]; i++) {
		char path[DUMP_PATH_MAX];
		if (beside_path(path, base, i) == 0)
			unlink(path);
	}
}

void cpuprof_get_stats(struct cpuprof_stats *out)
{
	memset(out, 0, sizeof *out);
	cpu_sampler_get_counts(&out->sampler);
	out->running = cpu_sampler_running();
	out->started = __atomic_load_n(&drain_started, __ATOMIC_RELAXED);
	out->timer = cpu_sampler_timer_name();
	out->hz = options_get()->cpu_hz;
	out->written = __atomic_load_n(&n_written, __ATOMIC_RELAXED);
	out->write_failed = __atomic_load_n(&n_write_failed, __ATOMIC_RELAXED);
}

void cpuprof_at_exit(void)
{
	lockrank_lock(&lock);
	if (run_s.on) {
		session_stop(&run_s);
		write_run_files();
	}
	lockrank_unlock(&lock);
}

/* ---- the HTTP window ---- */

int cpuprof_window_begin(unsigned seconds, enum cpuprof_format fmt)
{
	lockrank_lock(&lock);
	int rc = -EBUSY;
	if (win_state == 0) {
		rc = session_start(&win_s);
		if (rc == 0) {
			win_state = 1;
			win_fmt = fmt;
			win_end_ms = sys_mono_ns() / 1000000 + (int64_t)seconds * 1000;
		}
	}
	lockrank_unlock(&lock);
	return rc;
}

int64_t cpuprof_window_poll(int64_t now_ms)
{
	lockrank_lock(&lock);
	int64_t due = -1;
	if (win_state == 1) {
		if (now_ms >= win_end_ms) {
			session_stop(&win_s);
			win_state = 2;
		} else {
			due = win_end_ms;
		}
	}
	lockrank_unlock(&lock);
	return due;
}

int cpuprof_window_state(void)
{
	return __atomic_load_n(&win_state, __ATOMIC_ACQUIRE);
}

enum cpuprof_format cpuprof_window_format(void)
{
	return win_fmt;
}

static void window_forget(void)
{
	session_stop(&win_s);
	if (win_s.have)
		stacktab_release(&win_s.tab);
	win_s.have = 0;
	win_state = 0;
}

int cpuprof_window_write(int fd)
{
	lockrank_lock(&lock);
	int rc = -ENOENT;
	if (win_state == 2) {
		rc = session_write(&win_s, fd, win_fmt);
		__atomic_fetch_add(rc == 0 ? &n_written : &n_write_failed, 1, __ATOMIC_RELAXED);
		window_forget();
	}
	lockrank_unlock(&lock);
	return rc;
}

void cpuprof_window_cancel(void)
{
	lockrank_lock(&lock);
	window_forget();
	lockrank_unlock(&lock);
}

/* ---- fork ---- */

void cpuprof_fork_prepare(void)
{
	lockrank_lock(&lock);
	cpu_sampler_fork_prepare();
}

void cpuprof_fork_parent(void)
{
	cpu_sampler_fork_parent();
	lockrank_unlock(&lock);
}

void cpuprof_fork_child(void)
{
	cpu_sampler_fork_child();
	lockrank_unlock(&lock); /* taken by cpuprof_fork_prepare in this very thread */
	pthread_cond_init(&wake, NULL);
	drain_started = 0; /* the parent's thread does not exist here */
	int continue_run = run_s.on && options_get()->cpu_fork;
	struct session *all[2] = {&run_s, &win_s};
	for (int i = 0; i < 2; i++) {
		if (all[i]->have)
			stacktab_release(&all[i]->tab);
		memset(all[i], 0, sizeof *all[i]);
	}
	win_state = 0;
	if (continue_run)
		cpuprof_run_start();
}
