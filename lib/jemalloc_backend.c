/*
 * jemalloc_backend.c - the mallctl calls of jemalloc_backend.h: prof.active, prof.dump,
 * prof.reset, prof.lg_sample, opt.prof and malloc_stats_print("J") written into an outbuf.
 *
 * It is not a jemalloc replacement and knows nothing of heaptap's own tables; backend.c picks
 * between it and the collector.
 */
#include "jemalloc_backend.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "rundir.h"
#include "stats.h"
#include "sys.h"

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef void (*stats_fn)(void (*)(void *, const char *), void *, const char *);

static mallctl_fn je_ctl;
static stats_fn je_stats;
static int detected = -1;
static int prof_on;

static void *lookup(const char *base)
{
	static const char *const prefixes[] = {"", "_rjem_", "je_"};
	char name[64];
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
		size_t pl = strlen(prefixes[i]), bl = strlen(base);
		if (pl + bl + 1 > sizeof name)
			continue;
		memcpy(name, prefixes[i], pl);
		memcpy(name + pl, base, bl + 1);
		void *p = dlsym(RTLD_DEFAULT, name);
		if (p)
			return p;
	}
	return NULL;
}

int jemalloc_backend_detect(void)
{
	if (detected >= 0)
		return detected && prof_on;
	*(void **)&je_ctl = lookup("mallctl");
	*(void **)&je_stats = lookup("malloc_stats_print");
	detected = je_ctl != NULL;
	prof_on = detected && jemalloc_backend_bool("opt.prof") == 1;
	return detected && prof_on;
}

int jemalloc_backend_present(void)
{
	return detected > 0;
}

int jemalloc_backend_enabled(void)
{
	return detected > 0 && prof_on;
}

int jemalloc_backend_bool(const char *name)
{
	bool v = false;
	size_t len = sizeof v;
	if (!je_ctl)
		return -ENOSYS;
	int rc = je_ctl(name, &v, &len, NULL, 0);
	return rc ? -rc : (int)v;
}

const char *jemalloc_backend_string(const char *name)
{
	const char *v = NULL;
	size_t len = sizeof v;
	if (!je_ctl || je_ctl(name, &v, &len, NULL, 0) != 0)
		return NULL;
	return v;
}

int jemalloc_backend_set_active(int on)
{
	bool old = false, nv = on != 0;
	size_t len = sizeof old;
	if (!jemalloc_backend_enabled())
		return -ENOENT;
	int rc = je_ctl("prof.active", &old, &len, &nv, sizeof nv);
	return rc ? -rc : (int)old;
}

int jemalloc_backend_active(void)
{
	if (!jemalloc_backend_enabled())
		return -ENOENT;
	return jemalloc_backend_bool("prof.active");
}

int jemalloc_backend_dump(const char *path)
{
	if (!jemalloc_backend_enabled())
		return -ENOENT;
	int rc = je_ctl("prof.dump", NULL, NULL, &path, sizeof path);
	return rc ? -rc : 0;
}

int jemalloc_backend_reset(unsigned lg_sample)
{
	size_t lg = lg_sample;
	if (!jemalloc_backend_enabled())
		return -ENOENT;
	int rc = je_ctl("prof.reset", NULL, NULL, &lg, sizeof lg);
	return rc ? -rc : 0;
}

int jemalloc_backend_lg_sample(void)
{
	size_t lg = 0, len = sizeof lg;
	if (!jemalloc_backend_enabled())
		return -ENOENT;
	int rc = je_ctl("prof.lg_sample", &lg, &len, NULL, 0);
	return rc ? -rc : (int)lg;
}

static void stats_write(void *ctx, const char *s)
{
	outbuf_puts(ctx, s);
}

int jemalloc_backend_stats_json(struct outbuf *ob)
{
	if (!je_stats)
		return -ENOSYS;
	je_stats(stats_write, ob, "J");
	return 0;
}

/* ---- as a backend ---- */

static uint64_t dump_seq;

/* prof.dump into a fresh file of the run directory named after tag; its path in path. */
static int dump_to_rundir(char *path, size_t cap, const char *tag)
{
	char name[96];
	struct outbuf ob;
	outbuf_init(&ob, name, sizeof name - 1, -1);
	outbuf_puts(&ob, tag);
	outbuf_putc(&ob, '.');
	outbuf_u64(&ob, (uint64_t)getpid());
	outbuf_putc(&ob, '.');
	outbuf_u64(&ob, __atomic_fetch_add(&dump_seq, 1, __ATOMIC_RELAXED));
	outbuf_puts(&ob, ".m.heap");
	name[ob.len] = 0;
	if (!rundir_path(path, cap, name))
		return -errno;
	return jemalloc_backend_dump(path);
}

static int ops_dump_fd(int fd, enum dump_format fmt, const char *why)
{
	(void)why;
	if (fmt != DUMP_HEAPV2)
		return -ENOTSUP;
	char path[DUMP_PATH_MAX];
	int rc = dump_to_rundir(path, sizeof path, "http");
	if (rc < 0)
		return rc;
	int in = open(path, O_RDONLY | O_CLOEXEC);
	rc = in < 0 ? -errno : 0;
	unlink(path);
	char buf[16384];
	while (rc == 0) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n == 0)
			break;
		if (n < 0)
			rc = -errno;
		else if (write_all(fd, buf, (size_t)n) != 0)
			rc = -EIO;
	}
	if (in >= 0)
		close(in);
	return rc;
}

static int ops_dump_manual(char *name, size_t cap)
{
	return dump_to_rundir(name, cap, "jeprof");
}

static int ops_lg_sample(void)
{
	return jemalloc_backend_lg_sample();
}

static void ops_stats_json(struct outbuf *ob)
{
	if (jemalloc_backend_stats_json(ob) != 0)
		stats_json(ob);
}

const struct backend jemalloc_backend = {
	.name = "jemalloc",
	.formats = DUMP_HEAPV2,
	.enabled = jemalloc_backend_enabled,
	.dump_fd = ops_dump_fd,
	.dump_path = jemalloc_backend_dump,
	.dump_manual = ops_dump_manual,
	.set_active = jemalloc_backend_set_active,
	.active = jemalloc_backend_active,
	.reset = jemalloc_backend_reset,
	.lg_sample = ops_lg_sample,
	.stats_json = ops_stats_json,
};
