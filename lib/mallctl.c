/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mallctl.c - jemalloc's control entry point, mallctl(), exported by libheaptap.so so that a
 * program written against jemalloc's API (prof.dump, prof.active, prof.reset from its own code,
 * as in jemalloc's heap-profiling recipe and Mesos's libprocess) steers heaptap on any
 * allocator. Which implementation answers (docs/INTERNALS.md "mallctl"):
 *
 *   1. an unprefixed jemalloc in the process (a libjemalloc.so after heaptap in the search
 *      order, found with dlsym(RTLD_NEXT), or a `mallctl` the start-up scan found in the
 *      executable without exporting it): every call goes to it unchanged, so heaptap never
 *      shadows the program's jemalloc;
 *   2. a prefixed jemalloc (je_, _rjem_) whose profiler is heaptap's backend: every name goes
 *      to its mallctl except prof.dump, which writes heaptap's dump (allocator frames trimmed);
 *   3. otherwise heaptap answers a profiling subset itself (the table below) and ENOENT to
 *      every other name, as jemalloc does for a name it does not know.
 *
 * It is not jemalloc: it exports no mallocx, sdallocx, nallocx nor malloc_stats_print, whose
 * presence programs take for "jemalloc is the allocator", and answers no arena, tcache or
 * thread.allocatedp control. Return values are jemalloc's: 0 or a positive errno. No host
 * malloc (dlsym's own allocations run inside the reentrancy guard); not async-signal-safe.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "attrs.h"
#include "backend.h"
#include "core.h"
#include "dump.h"
#include "jemalloc_backend.h"
#include "lifecycle.h"
#include "options.h"

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);

enum route { ROUTE_OWN, ROUTE_NEXT, ROUTE_JEMALLOC };

static pthread_once_t resolved = PTHREAD_ONCE_INIT;
static enum route route;
static mallctl_fn next_ctl;      /* route NEXT: the mallctl after heaptap in the search order */
static size_t opt_lg_sample;     /* opt.lg_prof_sample: the rate at start */
static uint64_t epoch = 1;

/* Picks the route once, after start-up (the backend is chosen by then). */
static void resolve(void)
{
	lifecycle_init();
	tstate_enter(); /* dlsym may allocate: not the host's allocation */
	backend_choose();
	opt_lg_sample = options_get()->lg_prof_sample;
	void *p = dlsym(RTLD_NEXT, "mallctl");
	if (p) {
		memcpy(&next_ctl, &p, sizeof p); /* an object pointer to a function pointer */
		route = ROUTE_NEXT;
	} else if (jemalloc_backend_present() && !jemalloc_backend_prefix()[0]) {
		route = ROUTE_NEXT; /* an unexported one the scan found: jemalloc_backend_ctl */
	} else if (backend_get() == &jemalloc_backend) {
		route = ROUTE_JEMALLOC;
	}
	tstate_leave();
}

/* ---- one call's arguments and jemalloc's rules for them ---- */

struct ctl_call {
	void *oldp;
	size_t *oldlenp;
	void *newp;
	size_t newlen;
};

/* Copies the value out when asked; a length other than the value's is EINVAL (the shorter
   of the two copied, and the length set to it, as jemalloc does). */
static int ctl_read(struct ctl_call *c, const void *v, size_t n)
{
	if (!c->oldp || !c->oldlenp)
		return 0;
	if (*c->oldlenp != n) {
		size_t k = *c->oldlenp < n ? *c->oldlenp : n;
		memcpy(c->oldp, v, k);
		*c->oldlenp = k;
		return EINVAL;
	}
	memcpy(c->oldp, v, n);
	return 0;
}

/* 1 when a new value of n bytes was given (copied to v), 0 when none, -EINVAL for a bad length. */
static int ctl_write(struct ctl_call *c, void *v, size_t n)
{
	if (!c->newp)
		return 0;
	if (c->newlen != n)
		return -EINVAL;
	memcpy(v, c->newp, n);
	return 1;
}

static int readonly(struct ctl_call *c)
{
	return c->newp || c->newlen ? EPERM : 0;
}

static int writeonly(struct ctl_call *c)
{
	return c->oldp || c->oldlenp ? EPERM : 0;
}

static int read_bool(struct ctl_call *c, int v)
{
	bool b = v != 0;
	int rc = readonly(c);
	return rc ? rc : ctl_read(c, &b, sizeof b);
}

static int read_size(struct ctl_call *c, size_t v)
{
	int rc = readonly(c);
	return rc ? rc : ctl_read(c, &v, sizeof v);
}

/* ---- the controls heaptap answers itself ---- */

static int c_epoch(struct ctl_call *c)
{
	uint64_t v;
	int w = ctl_write(c, &v, sizeof v);
	if (w < 0)
		return EINVAL;
	uint64_t now = w ? __atomic_add_fetch(&epoch, 1, __ATOMIC_RELAXED)
	                 : __atomic_load_n(&epoch, __ATOMIC_RELAXED);
	return ctl_read(c, &now, sizeof now);
}

static int c_config_prof(struct ctl_call *c) { return read_bool(c, 1); }
static int c_opt_prof(struct ctl_call *c) { return read_bool(c, backend_get()->enabled()); }
static int c_opt_prof_active(struct ctl_call *c) { return read_bool(c, options_get()->prof_active); }
static int c_opt_prof_accum(struct ctl_call *c) { return read_bool(c, options_get()->prof_accum); }
static int c_opt_prof_final(struct ctl_call *c) { return read_bool(c, options_get()->prof_final); }
static int c_opt_prof_gdump(struct ctl_call *c) { return read_bool(c, options_get()->prof_gdump); }
static int c_opt_prof_leak(struct ctl_call *c) { return read_bool(c, options_get()->prof_leak); }
static int c_opt_lg_prof_sample(struct ctl_call *c) { return read_size(c, opt_lg_sample); }

static int c_opt_lg_prof_interval(struct ctl_call *c)
{
	ssize_t v = options_get()->lg_prof_interval;
	int rc = readonly(c);
	return rc ? rc : ctl_read(c, &v, sizeof v);
}

static int c_opt_prof_prefix(struct ctl_call *c)
{
	const char *v = options_get()->prof_prefix;
	int rc = readonly(c);
	return rc ? rc : ctl_read(c, &v, sizeof v);
}

static int c_prof_active(struct ctl_call *c)
{
	const struct backend *b = backend_get();
	bool nv;
	int w = ctl_write(c, &nv, sizeof nv);
	if (w < 0)
		return EINVAL;
	if (!b->enabled()) {
		if (w)
			return ENOENT; /* jemalloc: no switch to turn without opt.prof */
		return ctl_read(c, &(bool){false}, sizeof(bool));
	}
	int old = w ? b->set_active(nv) : b->active();
	if (old < 0)
		return -old;
	return ctl_read(c, &(bool){old != 0}, sizeof(bool));
}

static int c_prof_dump(struct ctl_call *c)
{
	const char *path = NULL;
	int rc = writeonly(c);
	if (rc)
		return rc;
	if (ctl_write(c, &path, sizeof path) < 0)
		return EINVAL;
	if (!backend_get()->enabled())
		return ENOENT;
	/* jemalloc's file names when none is given; any failure is EFAULT, as in jemalloc */
	rc = path ? dump_path(path) : dump_named(TRIG_MANUAL, NULL, 0);
	return rc ? EFAULT : 0;
}

static int c_prof_reset(struct ctl_call *c)
{
	const struct backend *b = backend_get();
	int rc = writeonly(c);
	if (rc)
		return rc;
	if (!b->enabled())
		return ENOENT;
	int cur = b->lg_sample();
	size_t lg = cur < 0 ? opt_lg_sample : (size_t)cur;
	if (ctl_write(c, &lg, sizeof lg) < 0)
		return EINVAL;
	if (lg > 62)
		lg = 62;
	rc = b->reset((unsigned)lg);
	return rc < 0 ? -rc : 0;
}

static int c_prof_lg_sample(struct ctl_call *c)
{
	int lg = backend_get()->lg_sample();
	return read_size(c, lg < 0 ? opt_lg_sample : (size_t)lg);
}

static int c_prof_interval(struct ctl_call *c)
{
	int lg = options_get()->lg_prof_interval;
	uint64_t v = lg >= 0 ? (uint64_t)1 << lg : 0;
	int rc = readonly(c);
	return rc ? rc : ctl_read(c, &v, sizeof v);
}

static int c_thread_prof_active(struct ctl_call *c)
{
	bool nv;
	int w = ctl_write(c, &nv, sizeof nv);
	if (w < 0)
		return EINVAL;
	if (!backend_get()->enabled())
		return ENOENT;
	tstate_enter();
	int old = w ? core_set_thread_active(nv) : !tstate_tls.thread_off;
	tstate_leave();
	return ctl_read(c, &(bool){old != 0}, sizeof(bool));
}

/* The live heap: exact with stats_exact, else the sampled estimate (what /heaptap/stats
   calls live_bytes_estimate). */
static int c_stats_allocated(struct ctl_call *c)
{
	int64_t exact = __atomic_load_n(&core_exact.live, __ATOMIC_RELAXED);
	size_t v = core_exact.on ? (size_t)(exact > 0 ? exact : 0)
	                         : (size_t)__atomic_load_n(&core.live_bytes_fp, __ATOMIC_RELAXED);
	return read_size(c, v);
}

static const struct ctl_entry {
	const char *name;
	int (*fn)(struct ctl_call *c);
} controls[] = {
	{"epoch", c_epoch},
	{"config.prof", c_config_prof},
	{"opt.prof", c_opt_prof},
	{"opt.prof_active", c_opt_prof_active},
	{"opt.prof_accum", c_opt_prof_accum},
	{"opt.prof_final", c_opt_prof_final},
	{"opt.prof_gdump", c_opt_prof_gdump},
	{"opt.prof_leak", c_opt_prof_leak},
	{"opt.lg_prof_sample", c_opt_lg_prof_sample},
	{"opt.lg_prof_interval", c_opt_lg_prof_interval},
	{"opt.prof_prefix", c_opt_prof_prefix},
	{"prof.active", c_prof_active},
	{"prof.dump", c_prof_dump},
	{"prof.reset", c_prof_reset},
	{"prof.lg_sample", c_prof_lg_sample},
	{"prof.interval", c_prof_interval},
	{"thread.prof.active", c_thread_prof_active},
	{"stats.allocated", c_stats_allocated},
};

HEAPTAP_EXPORT int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen)
{
	pthread_once(&resolved, resolve);
	if (!name)
		return EINVAL;
	if (route == ROUTE_NEXT)
		return next_ctl ? next_ctl(name, oldp, oldlenp, newp, newlen)
		                : jemalloc_backend_ctl(name, oldp, oldlenp, newp, newlen);
	struct ctl_call c = {oldp, oldlenp, newp, newlen};
	if (route == ROUTE_JEMALLOC && strcmp(name, "prof.dump") != 0)
		return jemalloc_backend_ctl(name, oldp, oldlenp, newp, newlen);
	for (size_t i = 0; i < sizeof controls / sizeof controls[0]; i++)
		if (strcmp(name, controls[i].name) == 0)
			return controls[i].fn(&c);
	return ENOENT;
}
