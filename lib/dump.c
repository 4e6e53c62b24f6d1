/*
 * dump.c - turns the collector's tables into profile files: takes a snapshot of the stack
 * table under the table lock, hands it to the in-process writers (heap_v2, pprof, legacy) as
 * a struct dump_source outside the lock, names files like jemalloc, writes them beside their
 * final name and renames, keeps the newest prof_max_dumps, and does the exit-time final
 * dump and leak summary.
 *
 * Dumps are serialised by the dump lock (rank 1, above the table lock). No host malloc: the
 * snapshot and the map live in mmap'd scratch reused across dumps. Not the triggers
 * (trigger.c) and not the formats (profile/heapv2_write.c and friends).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../base/outbuf.h"
#include "../profile/dumpsrc.h"
#include "../profile/heapv2_write.h"
#include "../profile/legacy_write.h"
#include "../profile/pprof_write.h"
#include "collector.h"
#include "internal.h"
#include "maps.h"
#include "options.h"
#include "sys.h"
#include "unwind.h"

static pthread_mutex_t dump_mutex = PTHREAD_MUTEX_INITIALIZER;

/* Snapshot of one stack, taken under the table lock. */
struct snap {
	uint64_t pool_off;
	uint32_t depth;
	double live_objs, live_bytes, alloc_objs, alloc_bytes;
	uint64_t live_samples;
};

static struct snap *snaps;
static size_t snaps_cap;
static size_t nsnaps;
static struct maps_snapshot maps;
static char exe_path[4096];
static char cmdline[8192];
static char wbuf[64 * 1024];

/* File naming (under the dump lock). */
static uint64_t seq;
static uint64_t kind_seq[6];
static char (*kept)[600]; /* ring of the newest automatic dumps' base names */
static uint64_t kept_n, kept_head;

static int exiting; /* under the dump lock: only the final dump from now on */
static int log_once_write;
static int log_once_snapshot;

void dump_set_exiting(void)
{
	dump_lock();
	exiting = 1;
	dump_unlock();
}

void dump_lock(void)
{
	pthread_mutex_lock(&dump_mutex);
}

void dump_unlock(void)
{
	pthread_mutex_unlock(&dump_mutex);
}

void dump_fork_prepare(void)
{
	pthread_mutex_lock(&dump_mutex);
}

void dump_fork_parent(void)
{
	pthread_mutex_unlock(&dump_mutex);
}

void dump_fork_child(void)
{
	seq = 0;
	memset(kind_seq, 0, sizeof kind_seq);
	kept_n = kept_head = 0;
	pthread_mutex_unlock(&dump_mutex);
}

static int for_each_stack(const struct dump_source *src,
                          int (*fn)(void *ctx, const struct dump_stack *st), void *ctx)
{
	(void)src;
	for (size_t i = 0; i < nsnaps; i++) {
		const struct snap *s = &snaps[i];
		struct dump_stack st;
		st.pcs = core.stacks.pool + s->pool_off;
		st.depth = s->depth;
		st.live_objs = s->live_objs;
		st.live_bytes = s->live_bytes;
		st.alloc_objs = s->alloc_objs;
		st.alloc_bytes = s->alloc_bytes;
		st.live_samples = s->live_samples;
		int r = fn(ctx, &st);
		if (r)
			return r;
	}
	return 0;
}

/* Copies the nonzero stacks (dump lock held). */
static int take_snapshot(void)
{
	nsnaps = 0;
	if (!snaps) {
		snaps_cap = core.stacks.cap;
		snaps = sys_map(snaps_cap * sizeof *snaps);
		if (!snaps) {
			snaps_cap = 0;
			return -ENOMEM;
		}
	}
	const double one = (double)(1u << STACKTAB_OBJS_SHIFT);
	unwind_refresh();
	core_lock_tables();
	for (uint32_t id = 0; id < core.stacks.n && nsnaps < snaps_cap; id++) {
		const struct stack_entry *e = stacktab_get(&core.stacks, id);
		if (e->live_objs_fp == 0 && e->alloc_objs_fp == 0)
			continue;
		struct snap *s = &snaps[nsnaps++];
		/* operator new frames of a libstdc++ loaded after the sample are stripped here */
		uint32_t skip = unwind_strip(stacktab_pcs(&core.stacks, e), e->depth);
		s->pool_off = e->pool_off + skip;
		s->depth = e->depth - skip;
		s->live_objs = (double)e->live_objs_fp / one;
		s->live_bytes = (double)e->live_bytes_fp;
		s->alloc_objs = (double)e->alloc_objs_fp / one;
		s->alloc_bytes = (double)e->alloc_bytes_fp;
		s->live_samples = e->live_samples;
	}
	core_unlock_tables();
	return 0;
}

static void read_process_facts(void)
{
	ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
	exe_path[n > 0 ? n : 0] = 0;
	long m = sys_read_small("/proc/self/cmdline", cmdline, sizeof cmdline);
	if (m < 0)
		m = 0;
	while (m > 0 && cmdline[m - 1] == 0)
		m--;
	for (long i = 0; i < m; i++)
		if (cmdline[i] == 0)
			cmdline[i] = ' ';
	cmdline[m] = 0;
}

/* Fills src from a fresh snapshot (dump lock held). */
static int prepare(struct dump_source *src, const char *trigger)
{
	memset(src, 0, sizeof *src);
	int rc = take_snapshot();
	if (rc)
		return rc;
	read_process_facts();
	if (maps_snapshot_take(&maps, exe_path) < 0)
		sys_log_once(&log_once_snapshot, "cannot read /proc/self/maps", " (dumps have no map)",
		             NULL);
	src->sample_period = __atomic_load_n(&core.period, __ATOMIC_RELAXED);
	src->accum = core.accum;
	src->time_ns = sys_now_ns();
	src->start_time_ns = core.start_time_ns;
	src->pid = (int)getpid();
	src->exe_path = exe_path;
	src->cmdline = cmdline;
	src->trigger = trigger;
	src->maps_text = maps.text;
	src->maps_len = maps.len;
	src->mappings = maps.maps;
	src->nmappings = maps.n;
	src->for_each_stack = for_each_stack;
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

int collector_dump_fd(int fd, enum dump_format fmt, const char *trigger)
{
	collector_init();
	if (!core.enabled)
		return -ENOENT;
	core_tls.depth++;
	dump_lock();
	struct dump_source src;
	int rc = prepare(&src, trigger ? trigger : "manual");
	if (rc == 0)
		rc = write_format(&src, fd, fmt);
	dump_unlock();
	core_tls.depth--;
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

/* Writes one format of src to path atomically (dump lock held). */
static int write_file(const struct dump_source *src, const char *path, enum dump_format fmt)
{
	char tmp[700];
	char num[24];
	struct outbuf ob;
	outbuf_init(&ob, tmp, sizeof tmp - 1, -1);
	outbuf_puts(&ob, path);
	outbuf_puts(&ob, ".tmp.");
	outbuf_u64(&ob, (uint64_t)src->pid);
	if (ob.truncated)
		return -ENAMETOOLONG;
	tmp[ob.len] = 0;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int rc = fd < 0 ? -errno : 0;
	if (rc == 0) {
		rc = write_format(src, fd, fmt);
		if (close(fd) != 0 && rc == 0)
			rc = -errno;
		if (rc == 0 && rename(tmp, path) != 0)
			rc = -errno;
		if (rc != 0)
			unlink(tmp);
	}
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

static const char kind_letter[] = {'i', 'u', 'm', 'f', 't', 's'};
static const char *const kind_name[] = {"interval", "gdump", "manual", "final", "time", "signal"};

static int is_automatic(enum dump_trigger trig)
{
	return trig == TRIG_INTERVAL || trig == TRIG_GDUMP || trig == TRIG_TIME || trig == TRIG_SIGNAL;
}

static void unlink_base(const char *base)
{
	char p[640];
	static const char *const ext[] = {".heap", ".pb.gz", ".txt"};
	for (size_t i = 0; i < 3; i++) {
		struct outbuf ob;
		outbuf_init(&ob, p, sizeof p - 1, -1);
		outbuf_puts(&ob, base);
		outbuf_puts(&ob, ext[i]);
		if (ob.truncated)
			continue;
		p[ob.len] = 0;
		unlink(p);
	}
}

/* Remembers an automatic dump and deletes the oldest beyond prof_max_dumps. */
static void retain(const char *base)
{
	uint64_t max = options_get()->prof_max_dumps;
	if (max == 0)
		return;
	if (max > 100000)
		max = 100000;
	if (!kept) {
		kept = sys_map((size_t)max * sizeof *kept);
		if (!kept)
			return;
	}
	if (kept_n == max) {
		unlink_base(kept[kept_head]);
		sys_strlcpy(kept[kept_head], base, sizeof kept[0]);
		kept_head = (kept_head + 1) % max;
	} else {
		sys_strlcpy(kept[(kept_head + kept_n) % max], base, sizeof kept[0]);
		kept_n++;
	}
}

int collector_dump_named(enum dump_trigger trig, char *name, size_t cap)
{
	collector_init();
	if (!core.enabled)
		return -ENOENT;
	const struct options *o = options_get();
	if (!o->prof_prefix[0])
		return -EINVAL;
	if ((unsigned)trig > TRIG_SIGNAL)
		return -EINVAL;
	core_tls.depth++;
	dump_lock();
	if (exiting && trig != TRIG_FINAL) {
		/* a background dump racing with exit would be cut off by _exit: skip it */
		dump_unlock();
		core_tls.depth--;
		return -ECANCELED;
	}
	char base[600];
	struct outbuf ob;
	outbuf_init(&ob, base, sizeof base - 1, -1);
	outbuf_puts(&ob, o->prof_prefix);
	outbuf_putc(&ob, '.');
	outbuf_u64(&ob, (uint64_t)getpid());
	outbuf_putc(&ob, '.');
	outbuf_u64(&ob, seq++);
	outbuf_putc(&ob, '.');
	outbuf_putc(&ob, kind_letter[trig]);
	if (trig != TRIG_FINAL)
		outbuf_u64(&ob, kind_seq[trig]++);
	base[ob.len] = 0;
	int rc = ob.truncated ? -ENAMETOOLONG : 0;

	struct dump_source src;
	if (rc == 0)
		rc = prepare(&src, kind_name[trig]);
	char path[640];
	unsigned fmt = o->prof_format ? o->prof_format : DUMP_HEAPV2;
	int named = 0;
	static const struct {
		unsigned bit;
		const char *ext;
	} outs[] = {{DUMP_HEAPV2, ".heap"}, {DUMP_PPROF, ".pb.gz"}, {DUMP_LEGACY, ".txt"}};
	for (size_t i = 0; rc == 0 && i < 3; i++) {
		if (!(fmt & outs[i].bit))
			continue;
		outbuf_init(&ob, path, sizeof path - 1, -1);
		outbuf_puts(&ob, base);
		outbuf_puts(&ob, outs[i].ext);
		path[ob.len] = 0;
		rc = write_file(&src, path, (enum dump_format)outs[i].bit);
		if (rc == 0 && name && !named) {
			sys_strlcpy(name, path, cap);
			named = 1;
		}
	}
	if (rc == 0 && is_automatic(trig))
		retain(base);
	stats_note_dump((int)trig, rc);
	dump_unlock();
	core_tls.depth--;
	return rc;
}

int collector_dump_path(const char *path)
{
	collector_init();
	if (!core.enabled)
		return -ENOENT;
	if (!path || !path[0])
		return -EINVAL;
	size_t n = strlen(path);
	enum dump_format fmt = DUMP_HEAPV2;
	if ((n > 6 && strcmp(path + n - 6, ".pb.gz") == 0) || (n > 3 && strcmp(path + n - 3, ".pb") == 0))
		fmt = DUMP_PPROF;
	core_tls.depth++;
	dump_lock();
	struct dump_source src;
	int rc = prepare(&src, "manual");
	if (rc == 0)
		rc = write_file(&src, path, fmt);
	stats_note_dump(TRIG_MANUAL, rc);
	dump_unlock();
	core_tls.depth--;
	return rc;
}

void dump_final(void)
{
	if (!core.enabled)
		return;
	const struct options *o = options_get();
	char name[640];
	name[0] = 0;
	trigger_drain();
	dump_set_exiting();
	if (o->prof_final && o->prof_prefix[0])
		collector_dump_named(TRIG_FINAL, name, sizeof name);
	if (!o->prof_leak)
		return;
	uint64_t objs_fp = 0, nbytes = 0, contexts = 0;
	core_lock_tables();
	for (uint32_t id = 0; id < core.stacks.n; id++) {
		const struct stack_entry *e = stacktab_get(&core.stacks, id);
		if (e->live_samples == 0)
			continue;
		contexts++;
		objs_fp += e->live_objs_fp;
		nbytes += e->live_bytes_fp;
	}
	core_unlock_tables();
	if (contexts == 0)
		return; /* like jemalloc: the summary only when something leaked */
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
	if (name[0]) {
		outbuf_puts(&ob, "; see: heaptap top ");
		outbuf_puts(&ob, exe_path);
		outbuf_putc(&ob, ' ');
		outbuf_puts(&ob, name);
	}
	if (ob.len > sizeof line - 2)
		ob.len = sizeof line - 2;
	line[ob.len++] = '\n';
	(void)write_all(2, line, ob.len);
	if (o->prof_leak_error && nbytes > 0)
		_exit(1);
}
