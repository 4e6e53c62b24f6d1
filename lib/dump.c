/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dump.c - the dumps of dump.h: a snapshot of the stack table taken under the table lock,
 * handed to the in-process writers as a struct dump_source outside the lock; file names like
 * jemalloc's; write beside, then rename; retention of the newest prof_max_dumps automatic
 * dumps; the leak summary. No host malloc.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../base/outbuf.h"
#include "../profile/inproc/dumpsrc.h"
#include "../profile/inproc/heapv2_write.h"
#include "../profile/inproc/legacy_write.h"
#include "../profile/inproc/pprof_write.h"
#include "core.h"
#include "cpuprof.h"
#include "dump.h"
#include "jemalloc_backend.h"
#include "jemalloc_dump.h"
#include "lockrank.h"
#include "maps.h"
#include "memacct.h"
#include "options.h"
#include "peakprof.h"
#include "safefile.h"
#include "sys.h"
#include "unwind.h"

static struct ranked_mutex dump_mutex = RANKED_MUTEX_INITIALIZER(LOCKRANK_DUMP);

/* Snapshot of one stack, taken under the table lock: 64 bytes per nonzero stack (the count of
   live samples, which no writer prints, saturates at 2^32 - 1 to fit beside depth). */
struct snap {
	const uintptr_t *pcs; /* in the stack table, which frees nothing while a dump holds it */
	uint32_t depth;
	uint32_t live_samples;
	double live_objs, live_bytes, alloc_objs, alloc_bytes;
	double xfree_objs, xfree_bytes;
};
_Static_assert(sizeof(struct snap) == 64, "a snapshot record is 64 bytes (docs/INTERNALS.md)");

static struct snap *snaps;
static struct dump_losses drops; /* what the snapshot's samples do not show */
static int held;                 /* the snapshot holds the stack table */
static size_t snaps_cap;
static size_t nsnaps;
static struct maps_snapshot maps;
static char exe_path[4096];
static char cmdline[8192];
static char wbuf[64 * 1024];

/* File naming (under the dump lock). */
static uint64_t seq;
static uint64_t kind_seq[TRIG_COUNT];
/* Rings of the newest dumps' base names, for retention: [0] the automatic ones, [1] the manual
   ones (so a flood of manual dumps cannot delete the automatic history, nor the reverse). */
struct kept_ring {
	char (*names)[DUMP_PATH_MAX];
	uint64_t n, head;
};
static struct kept_ring kept[2];
static struct dump_counts counts;

static int exiting; /* under the dump lock: only the final dump from now on */
static int sync_files; /* under the dump lock: fdatasync before the rename (memory-pressure dumps) */
static int from_jemalloc; /* atomic: the stacks come from the program's jemalloc */
static int cleaned_stale; /* stale temporaries looked for (once per process) */
static int log_once_write;
static int log_once_snapshot;
static int log_once_cancel;

void dump_use_jemalloc(void)
{
	__atomic_store_n(&from_jemalloc, 1, __ATOMIC_RELEASE);
}

/* 1 when there is a profiler to dump: heaptap's own, or the program's jemalloc. */
static int source_enabled(void)
{
	if (__atomic_load_n(&from_jemalloc, __ATOMIC_ACQUIRE))
		return jemalloc_backend_enabled();
	core_init();
	return core.enabled;
}

void dump_set_exiting(void)
{
	dump_lock();
	exiting = 1;
	dump_unlock();
}

void dump_lock(void)
{
	lockrank_lock(&dump_mutex);
}

static void release_snapshot(void);

void dump_unlock(void)
{
	release_snapshot(); /* a dump is over: the stack table may recycle again */
	lockrank_unlock(&dump_mutex);
}

void dump_fork_prepare(void)
{
	lockrank_lock(&dump_mutex);
}

void dump_fork_parent(void)
{
	lockrank_unlock(&dump_mutex);
}

void dump_fork_child(void)
{
	seq = 0;
	memset(kind_seq, 0, sizeof kind_seq);
	kept[0].n = kept[0].head = kept[1].n = kept[1].head = 0;
	memset(&counts, 0, sizeof counts);
	lockrank_unlock(&dump_mutex);
}

/* A dump attempt of trigger trig finished with rc (0 or -errno). */
static void note_outcome(enum dump_trigger trig, int rc)
{
	if (rc == 0) {
		__atomic_fetch_add(&counts.ok[trig], 1, __ATOMIC_RELAXED);
	} else {
		__atomic_fetch_add(&counts.failed[trig], 1, __ATOMIC_RELAXED);
		__atomic_store_n(&counts.last_errno, -rc, __ATOMIC_RELAXED);
	}
}

void dump_get_counts(struct dump_counts *out)
{
	for (int i = 0; i < TRIG_COUNT; i++) {
		out->ok[i] = __atomic_load_n(&counts.ok[i], __ATOMIC_RELAXED);
		out->failed[i] = __atomic_load_n(&counts.failed[i], __ATOMIC_RELAXED);
	}
	out->last_errno = __atomic_load_n(&counts.last_errno, __ATOMIC_RELAXED);
}

static int for_each_stack(const struct dump_source *src,
                          int (*fn)(void *ctx, const struct dump_stack *st), void *ctx)
{
	(void)src;
	for (size_t i = 0; i < nsnaps; i++) {
		const struct snap *s = &snaps[i];
		struct dump_stack st;
		st.pcs = s->pcs;
		st.depth = s->depth;
		st.live_objs = s->live_objs;
		st.live_bytes = s->live_bytes;
		st.alloc_objs = s->alloc_objs;
		st.alloc_bytes = s->alloc_bytes;
		st.live_samples = s->live_samples;
		st.xfree_objs = s->xfree_objs;
		st.xfree_bytes = s->xfree_bytes;
		int r = fn(ctx, &st);
		if (r)
			return r;
	}
	return 0;
}

/* Copies the nonzero stacks' counts (dump lock held) into snaps, mapped to fit and kept for
   the next dump; the PCs stay in the stack table, held until release_snapshot. view, when not
   NULL, rewrites each stack's values first (delta profiles), else alloc_* are dropped unless
   prof_accum. */
static int take_snapshot(const struct dump_view *view)
{
	nsnaps = 0;
	const double one = (double)(1u << STACKTAB_OBJS_SHIFT);
	unwind_refresh();
	for (;;) {
		core_lock_tables();
		uint64_t want = stacktab_count(&core.stacks);
		if (want <= snaps_cap)
			break; /* the lock stays held */
		core_unlock_tables();
		/* room for the stacks now and some growth; the old array goes */
		size_t cap = (size_t)want + want / 4 + 1024;
		struct snap *ns = sys_map(cap * sizeof *ns);
		if (!ns)
			return -ENOMEM;
		if (snaps)
			sys_unmap(snaps, snaps_cap * sizeof *snaps);
		snaps = ns;
		snaps_cap = cap;
	}
	uint32_t end = stacktab_id_end(&core.stacks);
	for (uint32_t id = 0; id < end && nsnaps < snaps_cap; id++) {
		const struct stack_entry *e = stacktab_get(&core.stacks, id);
		if (e->depth == 0)
			continue;
		struct dump_values v = {e->live_objs_fp, e->live_bytes_fp, e->alloc_objs_fp, e->alloc_bytes_fp};
		if (view)
			view->adjust(view->ctx, id, e, &v);
		else if (!core.accum)
			v.alloc_objs_fp = v.alloc_bytes_fp = 0;
		/* bytes freed by other threads: cumulative, in the plain dumps only */
		uint64_t xo = view ? 0 : e->xfree_objs_fp, xb = view ? 0 : e->xfree_bytes_fp;
		if (v.live_objs_fp == 0 && v.alloc_objs_fp == 0 && xb == 0)
			continue;
		struct snap *s = &snaps[nsnaps++];
		/* operator new frames of a libstdc++ loaded after the sample are stripped here */
		uint32_t skip = unwind_strip(e->pcs, e->depth);
		s->pcs = e->pcs + skip;
		s->depth = e->depth - skip;
		s->live_objs = (double)v.live_objs_fp / one;
		s->live_bytes = (double)v.live_bytes_fp;
		s->alloc_objs = (double)v.alloc_objs_fp / one;
		s->alloc_bytes = (double)v.alloc_bytes_fp;
		s->live_samples = e->live_samples > UINT32_MAX ? UINT32_MAX : (uint32_t)e->live_samples;
		s->xfree_objs = (double)xo / one;
		s->xfree_bytes = (double)xb;
	}
	drops.dropped_samples = core.dropped_stacks + core.dropped_live;
	drops.dropped_bytes = core.dropped_bytes_fp;
	drops.truncated_samples = core.truncated_samples;
	drops.truncated_bytes = core.truncated_bytes_fp;
	drops.unwind_failed = core.unwind_failed;
	drops.samples = core.samples;
	drops.recycled_stacks = drops.recycled_objs = drops.recycled_bytes = 0;
	if (view && view->finish)
		view->finish(view->ctx, &drops);
	stacktab_hold(&core.stacks, +1);
	held = 1;
	core_unlock_tables();
	return 0;
}

/* The stack table may free stacks again (dump lock held, after the writers ran). */
static void release_snapshot(void)
{
	if (!held)
		return;
	held = 0;
	core_lock_tables();
	stacktab_hold(&core.stacks, -1);
	core_unlock_tables();
}

static void read_process_facts(void)
{
	sys_process_identity(exe_path, sizeof exe_path, cmdline, sizeof cmdline);
}

/* Fills src from a fresh snapshot (dump lock held), its values rewritten by view when not
   NULL (dump_fd_view); with peak, from the peak profile's copy
   (peakprof.h), whose memory figures are only the heap's at the peak. */
static int prepare(struct dump_source *src, const char *trigger, int peak,
                   const struct dump_view *view)
{
	memset(src, 0, sizeof *src);
	int jemalloc = __atomic_load_n(&from_jemalloc, __ATOMIC_ACQUIRE);
	uint64_t period = 0;
	int accum = 0;
	uint64_t peak_bytes = 0;
	int rc;
	if (peak) {
		core_lock_tables();
		rc = peakprof_view_locked(&peak_bytes);
		core_unlock_tables();
	} else {
		rc = jemalloc ? jemalloc_dump_take(&period, &accum) : take_snapshot(view);
	}
	if (rc)
		return rc;
	if (peak) {
		src->memory.present = 1;
		src->memory.allocator = "";
		src->memory.v[MF_HEAP_LIVE] = src->memory.v[MF_HEAP_PEAK] = peak_bytes;
	} else {
		memacct_read(&src->memory);
	}
	read_process_facts();
	if (maps_snapshot_take(&maps, exe_path) < 0)
		sys_log_once(&log_once_snapshot, "cannot read /proc/self/maps", " (dumps have no map)",
		             NULL);
	jemalloc = jemalloc && !peak;
	src->sample_period = jemalloc ? period : __atomic_load_n(&core.period, __ATOMIC_RELAXED);
	src->accum = jemalloc ? accum : view ? 1 : core.accum;
	src->time_ns = sys_now_ns();
	src->start_time_ns = view ? view->since_ns : core.start_time_ns;
	src->pid = (int)getpid();
	src->exe_path = exe_path;
	src->cmdline = cmdline;
	src->trigger = trigger;
	src->maps_text = maps.text;
	src->maps_len = maps.len;
	src->mappings = maps.maps;
	src->nmappings = maps.n;
	src->for_each_stack = peak ? peakprof_for_each_stack
	                           : jemalloc ? jemalloc_dump_for_each : for_each_stack;
	if (!jemalloc && !peak)
		src->losses = drops; /* the stacks' losses: counted by take_snapshot */
	return 0;
}

static int write_format(const struct dump_source *src, int fd, enum dump_format fmt)
{
	struct outbuf ob;
	switch (fmt) {
	case DUMP_PPROF:
		return pprof_write(src, fd);
	case DUMP_LEGACY:
		outbuf_init(&ob, wbuf, sizeof wbuf, fd);
		legacy_write(src, &ob);
		return outbuf_flush(&ob);
	default:
		outbuf_init(&ob, wbuf, sizeof wbuf, fd);
		heapv2_write(src, &ob);
		return outbuf_flush(&ob);
	}
}

int dump_fd(int fd, enum dump_format fmt, const char *why)
{
	if (!source_enabled())
		return -ENOENT;
	tstate_enter();
	dump_lock();
	struct dump_source src;
	int peak = why && strcmp(why, "peak") == 0;
	int rc = prepare(&src, why ? why : "manual", peak, NULL);
	if (rc == 0)
		rc = write_format(&src, fd, fmt);
	dump_unlock();
	tstate_leave();
	return rc;
}

int dump_fd_view(int fd, enum dump_format fmt, const char *why, const struct dump_view *view)
{
	core_init();
	if (!core.enabled)
		return -ENOENT;
	tstate_enter();
	dump_lock();
	struct dump_source src;
	int rc = prepare(&src, why ? why : "delta", 0, view);
	if (rc == 0)
		rc = write_format(&src, fd, fmt);
	dump_unlock();
	tstate_leave();
	return rc;
}

static const char *errno_text(int e)
{
	switch (e) {
	case ENOENT: return "no such file or directory";
	case EACCES: return "permission denied";
	case ENOSPC: return "no space left on device";
	case EROFS: return "read-only file system";
	case EDQUOT: return "disk quota exceeded";
	case EIO: return "input/output error";
	case ENOMEM: return "out of memory";
	case ENAMETOOLONG: return "file name too long";
	case ENOTDIR: return "not a directory";
	default: return "write failed";
	}
}

/* The part of a dump file name that names the program's dumps: up to the ".<pid>." that
   jemalloc's names put after the prefix (the whole leaf when there is none). */
static const char *leaf_stem(const char *leaf)
{
	static char stem[DUMP_PATH_MAX];
	size_t n = strlen(leaf);
	for (size_t i = 0; i < n; i++) {
		if (leaf[i] != '.' || leaf[i + 1] < '0' || leaf[i + 1] > '9')
			continue;
		n = i + 1;
		break;
	}
	if (n >= sizeof stem)
		n = sizeof stem - 1;
	memcpy(stem, leaf, n);
	stem[n] = 0;
	return stem;
}

/* 1 if name is "<anything>.tmp.<pid>" or "<anything>.tmp.<pid>.<16 hex>" (a temporary of
   safefile_write, or of heaptap before 0.2); its pid in *pid. */
static int is_temporary(const char *name, long *pid)
{
	const char *t = NULL;
	for (const char *p = strstr(name, ".tmp."); p; p = strstr(p + 1, ".tmp."))
		t = p;
	if (!t)
		return 0;
	const char *p = t + 5;
	long v = 0;
	int digits = 0;
	while (*p >= '0' && *p <= '9' && digits < 10) {
		v = v * 10 + (*p++ - '0');
		digits++;
	}
	if (!digits)
		return 0;
	if (*p == '.') {
		int hex = 0;
		for (p++; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
			hex++;
		if (hex != 16)
			return 0;
	}
	*pid = v;
	return *p == 0;
}

/*
 * Deletes the temporaries that processes which died mid-dump (SIGKILL, an OOM kill) left in
 * the directory dirfd, when their name starts with `stem` and they are regular files of ours.
 * Reads the directory with getdents64 into a fixed buffer (no opendir: it allocates).
 */
static void clean_stale(int dirfd, const char *stem)
{
	static char dbuf[32768];
	size_t sl = strlen(stem);
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (;;) {
		long n = syscall(SYS_getdents64, fd, dbuf, sizeof dbuf);
		if (n <= 0)
			break;
		for (long off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(dbuf + off);
			off += d->reclen;
			long pid;
			struct stat st;
			if (strncmp(d->name, stem, sl) != 0 || !is_temporary(d->name, &pid) ||
			    pid == getpid() || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
				continue;
			if (fstatat(dirfd, d->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
			    st.st_uid == geteuid())
				unlinkat(dirfd, d->name, 0);
		}
	}
	close(fd);
}

/*
 * Writes one format of src to path atomically (dump lock held): into a temporary with an
 * unpredictable name created with O_EXCL|O_NOFOLLOW beside it (relative to the directory's
 * descriptor, so a directory swapped meanwhile changes nothing), mode prof_dump_mode, then
 * renamed over path (rename replaces a planted symlink instead of following it).
 */
/* safefile's callbacks: the stale temporaries of dead processes are looked for once, in the
   first dump's directory; the content is the formats' writer's. */
static void clean_stale_once(int dirfd, const char *leaf)
{
	if (!cleaned_stale) {
		cleaned_stale = 1;
		clean_stale(dirfd, leaf_stem(leaf));
	}
}

struct fill_ctx {
	const struct dump_source *src;
	enum dump_format fmt;
};

static int fill_format(void *ctx, int fd)
{
	const struct fill_ctx *f = ctx;
	return write_format(f->src, fd, f->fmt);
}

static int write_file(const struct dump_source *src, const char *path, enum dump_format fmt)
{
	char num[24];
	struct fill_ctx fc = {src, fmt};
	int rc = safefile_write(path, (mode_t)options_get()->prof_dump_mode, sync_files, fill_format,
	                        &fc, clean_stale_once);
	if (rc != 0) {
		fmt_u64(num, (uint64_t)-rc);
		char why[96];
		struct outbuf wb;
		outbuf_init(&wb, why, sizeof why - 1, -1);
		outbuf_puts(&wb, ": ");
		outbuf_puts(&wb, errno_text(-rc));
		outbuf_puts(&wb, " (errno ");
		outbuf_puts(&wb, num);
		outbuf_puts(&wb, "; further dump errors are only counted)");
		why[wb.len] = 0;
		sys_log_once(&log_once_write, "cannot write dump ", path, why);
	}
	return rc;
}

static void unlink_base(const char *base)
{
	char p[DUMP_PATH_MAX];
	for (size_t i = 0; i < DUMPFMT_COUNT; i++) {
		struct outbuf ob;
		outbuf_init(&ob, p, sizeof p - 1, -1);
		outbuf_puts(&ob, base);
		outbuf_puts(&ob, dumpfmt_table[i].ext);
		if (ob.truncated)
			continue;
		p[ob.len] = 0;
		unlink(p);
	}
	cpuprof_unlink_beside(base);
}

/* Remembers a dump of trig and deletes the oldest of its kind (automatic or manual) beyond
   prof_max_dumps. Final dumps are never deleted. */
static void retain(enum dump_trigger trig, const char *base)
{
	uint64_t max = options_get()->prof_max_dumps;
	if (max == 0 || trig == TRIG_FINAL)
		return;
	if (max > 100000)
		max = 100000;
	struct kept_ring *k = &kept[trigger_table[trig].automatic ? 0 : 1];
	if (!k->names) {
		k->names = sys_map((size_t)max * sizeof *k->names);
		if (!k->names)
			return;
	}
	if (k->n == max) {
		unlink_base(k->names[k->head]);
		sys_strlcpy(k->names[k->head], base, sizeof k->names[0]);
		k->head = (k->head + 1) % max;
	} else {
		sys_strlcpy(k->names[(k->head + k->n) % max], base, sizeof k->names[0]);
		k->n++;
	}
}

int dump_named(enum dump_trigger trig, char *name, size_t cap)
{
	return dump_named_why(trig, NULL, name, cap);
}

int dump_named_why(enum dump_trigger trig, const char *reason, char *name, size_t cap)
{
	if (!source_enabled())
		return -ENOENT;
	const struct options *o = options_get();
	if (!o->prof_prefix[0])
		return -EINVAL;
	if ((unsigned)trig >= TRIG_COUNT)
		return -EINVAL;
	tstate_enter();
	dump_lock();
	if (exiting && trig != TRIG_FINAL && trig != TRIG_PEAK) {
		/* a background dump racing with exit would be cut off by _exit: skip it, counted as
		   failed (ECANCELED) and said (nothing reads the statistics after exit) */
		note_outcome(trig, -ECANCELED);
		sys_log_once(&log_once_cancel, "the ", trigger_table[trig].name,
		             " dump asked for during exit was not written (the process was exiting)");
		dump_unlock();
		tstate_leave();
		return -ECANCELED;
	}
	char base[DUMP_PATH_MAX - 8]; /* room for the longest extension */
	struct outbuf ob;
	outbuf_init(&ob, base, sizeof base - 1, -1);
	outbuf_puts(&ob, o->prof_prefix);
	outbuf_putc(&ob, '.');
	outbuf_u64(&ob, (uint64_t)getpid());
	outbuf_putc(&ob, '.');
	outbuf_u64(&ob, seq++);
	outbuf_putc(&ob, '.');
	outbuf_putc(&ob, trigger_table[trig].letter);
	if (trig != TRIG_FINAL && trig != TRIG_PEAK)
		outbuf_u64(&ob, kind_seq[trig]++);
	base[ob.len] = 0;
	int rc = ob.truncated ? -ENAMETOOLONG : 0;

	struct dump_source src;
	if (rc == 0)
		rc = prepare(&src, trigger_table[trig].name, trig == TRIG_PEAK, NULL);
	if (rc == 0)
		src.reason = reason;
	sync_files = trig == TRIG_OOM;
	char path[DUMP_PATH_MAX];
	unsigned fmt = o->prof_format ? o->prof_format : DUMP_HEAPV2;
	int named = 0;
	for (size_t i = 0; rc == 0 && i < DUMPFMT_COUNT; i++) {
		if (!(fmt & dumpfmt_table[i].bit))
			continue;
		outbuf_init(&ob, path, sizeof path - 1, -1);
		outbuf_puts(&ob, base);
		outbuf_puts(&ob, dumpfmt_table[i].ext);
		path[ob.len] = 0;
		rc = write_file(&src, path, dumpfmt_table[i].bit);
		if (rc == 0 && name && !named) {
			sys_strlcpy(name, path, cap);
			named = 1;
		}
	}
	sync_files = 0;
	/* the run CPU profile so far, beside the heap dump (cpuprof.h); its failures are the CPU
	   profiler's to count, not the heap dump's */
	if (rc == 0 && trig != TRIG_FINAL && trig != TRIG_PEAK)
		(void)cpuprof_dump_beside(base);
	if (rc == 0)
		retain(trig, base);
	if (!(trig == TRIG_PEAK && rc == -ENOENT)) /* no peak profile: nothing to write */
		note_outcome(trig, rc);
	dump_unlock();
	tstate_leave();
	return rc;
}

int dump_path(const char *path)
{
	if (!source_enabled())
		return -ENOENT;
	if (!path || !path[0])
		return -EINVAL;
	size_t n = strlen(path);
	enum dump_format fmt = DUMP_HEAPV2;
	if ((n > 6 && strcmp(path + n - 6, ".pb.gz") == 0) || (n > 3 && strcmp(path + n - 3, ".pb") == 0))
		fmt = DUMP_PPROF;
	tstate_enter();
	dump_lock();
	struct dump_source src;
	int rc = prepare(&src, "manual", 0, NULL);
	if (rc == 0)
		rc = write_file(&src, path, fmt);
	note_outcome(TRIG_MANUAL, rc);
	dump_unlock();
	tstate_leave();
	return rc;
}

uint64_t dump_leak_summary(const char *name)
{
	if (!core.enabled)
		return 0;
	uint64_t objs_fp = 0, nbytes = 0, contexts = 0;
	core_lock_tables();
	uint32_t end = stacktab_id_end(&core.stacks);
	for (uint32_t id = 0; id < end; id++) {
		const struct stack_entry *e = stacktab_get(&core.stacks, id);
		if (e->depth == 0 || e->live_samples == 0)
			continue;
		contexts++;
		objs_fp += e->live_objs_fp;
		nbytes += e->live_bytes_fp;
	}
	core_unlock_tables();
	if (contexts == 0)
		return 0; /* like jemalloc: the summary only when something leaked */
	uint64_t objs = (objs_fp + (1u << (STACKTAB_OBJS_SHIFT - 1))) >> STACKTAB_OBJS_SHIFT;
	char line[1600];
	struct outbuf ob;
	outbuf_init(&ob, line, sizeof line - 1, -1);
	outbuf_puts(&ob, "heaptap: leak summary: ~");
	outbuf_u64(&ob, nbytes);
	outbuf_puts(&ob, " bytes, ~");
	outbuf_u64(&ob, objs);
	outbuf_puts(&ob, " objects, >= ");
	outbuf_u64(&ob, contexts);
	outbuf_puts(&ob, " contexts");
	if (name && name[0]) {
		outbuf_puts(&ob, "; see: heaptap top ");
		outbuf_puts(&ob, exe_path);
		outbuf_putc(&ob, ' ');
		outbuf_puts(&ob, name);
	}
	if (ob.len > sizeof line - 2)
		ob.len = sizeof line - 2;
	line[ob.len++] = '\n';
	(void)write_all(2, line, ob.len);
	return nbytes;
}
