/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memacct.c - the memory accounting of memacct.h: the core's heap sums, the allocator's own
 * statistics (resolved once with dlsym and used only when they come from the object that
 * defines the malloc heaptap forwards to), /proc/self/smaps_rollup or status, the cgroup.
 * Raw system calls and fixed buffers; no host malloc.
 */
#include "memacct.h"

#include <dlfcn.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "../base/jsonw.h"
#include "cgroup.h"
#include "core.h"
#include "options.h"
#include "real.h"
#include "sys.h"

/* glibc's struct mallinfo2 (2.33+) and struct mallinfo, declared here so the collector
   builds and loads where <malloc.h> has only the old one (glibc 2.17). */
struct glibc_mallinfo2 {
	size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};
struct glibc_mallinfo {
	int arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};

enum alloc_kind { AK_UNKNOWN, AK_GLIBC, AK_JEMALLOC, AK_TCMALLOC };

static int resolved; /* 0 not yet, 1 resolving or done (atomic) */
static int ready;    /* 1 once the look-ups are done (atomic) */
static enum alloc_kind kind;
static struct glibc_mallinfo2 (*fn_mallinfo2)(void);
static struct glibc_mallinfo (*fn_mallinfo)(void);
static int (*fn_mallctl)(const char *, void *, size_t *, void *, size_t);
static int (*fn_tc_prop)(const char *, size_t *);

/* 1 when sym lives in the same loaded object as the malloc heaptap calls. */
static int same_object(void *sym)
{
	Dl_info a, b;
	if (!sym || !real.malloc || !dladdr(sym, &a) || !dladdr((void *)real.malloc, &b))
		return 0;
	return a.dli_fbase == b.dli_fbase;
}

/* name as the allocator below heaptap has it: the next object's first (libheaptap.so exports
   a mallctl of its own, lib/mallctl.c), else the process's default. */
static void *below(const char *name)
{
	void *v = dlsym(RTLD_NEXT, name);
	return same_object(v) ? v : dlsym(RTLD_DEFAULT, name);
}

/* The look-ups (dlsym may allocate: inside the guard, once). */
void memacct_init(void)
{
	int expect = 0;
	if (!__atomic_compare_exchange_n(&resolved, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
			sched_yield();
		return;
	}
	tstate_enter();
	void *ctl = below("mallctl");
	void *tc = below("MallocExtension_GetNumericProperty");
	void *mi2 = below("mallinfo2");
	void *mi = below("mallinfo");
	if (same_object(ctl)) {
		kind = AK_JEMALLOC;
		*(void **)&fn_mallctl = ctl;
	} else if (same_object(tc)) {
		kind = AK_TCMALLOC;
		*(void **)&fn_tc_prop = tc;
	} else if (same_object(mi2) || same_object(mi)) {
		kind = AK_GLIBC;
		if (same_object(mi2))
			*(void **)&fn_mallinfo2 = mi2;
		else
			*(void **)&fn_mallinfo = mi;
	}
	/* the memory cgroup, found once from here too */
	cgroup_locate(options_get()->mem_cgroup);
	tstate_leave();
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
}

static size_t je_size(const char *name)
{
	size_t v = 0, len = sizeof v;
	return fn_mallctl(name, &v, &len, NULL, 0) == 0 ? v : 0;
}

static void read_jemalloc(struct memfacts *m)
{
	uint64_t epoch = 1;
	size_t len = sizeof epoch;
	fn_mallctl("epoch", &epoch, &len, &epoch, len); /* refresh the cached statistics */
	size_t allocated = je_size("stats.allocated");
	size_t resident = je_size("stats.resident");
	size_t page = je_size("arenas.page");
	/* MALLCTL_ARENAS_ALL is 4096: the sums over every arena */
	size_t dirty = je_size("stats.arenas.4096.pdirty") + je_size("stats.arenas.4096.pmuzzy");
	m->allocator = "jemalloc";
	m->v[MF_ALLOC_IN_USE] = allocated;
	m->v[MF_ALLOC_FREE] = resident > allocated ? resident - allocated : 0;
	m->v[MF_ALLOC_TRIMMABLE] = dirty * (page ? page : 4096);
	m->v[MF_ALLOC_MAPPED] = je_size("stats.mapped");
}

static size_t tc_prop(const char *name)
{
	size_t v = 0;
	return fn_tc_prop(name, &v) ? v : 0;
}

static void read_tcmalloc(struct memfacts *m)
{
	size_t allocated = tc_prop("generic.current_allocated_bytes");
	size_t heap = tc_prop("generic.heap_size");
	size_t unmapped = tc_prop("tcmalloc.pageheap_unmapped_bytes");
	m->allocator = "tcmalloc";
	m->v[MF_ALLOC_IN_USE] = allocated;
	m->v[MF_ALLOC_FREE] = heap > allocated + unmapped ? heap - allocated - unmapped : 0;
	m->v[MF_ALLOC_TRIMMABLE] = tc_prop("tcmalloc.pageheap_free_bytes");
	m->v[MF_ALLOC_MAPPED] = heap;
}

static void read_glibc(struct memfacts *m)
{
	struct glibc_mallinfo2 mi;
	if (fn_mallinfo2) {
		mi = fn_mallinfo2();
	} else {
		/* the old interface's ints wrap at 4 GiB: read them as unsigned */
		struct glibc_mallinfo o = fn_mallinfo();
		mi.arena = (unsigned)o.arena;
		mi.hblkhd = (unsigned)o.hblkhd;
		mi.uordblks = (unsigned)o.uordblks;
		mi.fordblks = (unsigned)o.fordblks;
		mi.keepcost = (unsigned)o.keepcost;
	}
	m->allocator = "glibc";
	/* arena: bytes obtained with sbrk and in the other arenas' heaps; hblkhd: mmap'd chunks */
	m->v[MF_ALLOC_IN_USE] = mi.uordblks + mi.hblkhd;
	m->v[MF_ALLOC_FREE] = mi.fordblks;
	m->v[MF_ALLOC_TRIMMABLE] = mi.keepcost;
	m->v[MF_ALLOC_MAPPED] = mi.arena + mi.hblkhd;
}

/* The value after "key" on its line of text, in kB, as bytes (0 when absent). */
static uint64_t kb_field(const char *text, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = text; p && *p;) {
		if (strncmp(p, key, kl) == 0) {
			const char *s = p + kl;
			uint64_t v;
			return cgroup_parse_u64(&s, &v) == 0 ? v * 1024 : 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

/* From /proc/self/status (counters the kernel keeps: O(1) to read). */
static void read_status(struct memfacts *m)
{
	char buf[4096];
	if (sys_read_small("/proc/self/status", buf, sizeof buf) <= 0)
		return;
	m->v[MF_RSS] = kb_field(buf, "VmRSS:");
	m->v[MF_RSS_ANON] = kb_field(buf, "RssAnon:");
	m->v[MF_RSS_FILE] = kb_field(buf, "RssFile:") + kb_field(buf, "RssShmem:");
	m->v[MF_SWAP] = kb_field(buf, "VmSwap:");
}

/* From /proc/self/smaps_rollup (exact, walks the page tables); status when it is missing. */
static void read_rollup(struct memfacts *m)
{
	char buf[4096];
	if (sys_read_small("/proc/self/smaps_rollup", buf, sizeof buf) <= 0 || !strstr(buf, "Rss:")) {
		read_status(m);
		return;
	}
	uint64_t rss = kb_field(buf, "Rss:");
	uint64_t anon = kb_field(buf, "Anonymous:");
	m->v[MF_RSS] = rss;
	m->v[MF_RSS_ANON] = anon;
	m->v[MF_RSS_FILE] = rss > anon ? rss - anon : 0;
	m->v[MF_SWAP] = kb_field(buf, "Swap:");
}

static void read_common(struct memfacts *m)
{
	memset(m, 0, sizeof *m);
	m->present = 1;
	m->allocator = "";
	memacct_init();
	if (core.enabled) {
		core_lock_tables();
		m->v[MF_HEAP_LIVE] = core.live_bytes_fp;
		m->v[MF_HEAP_PEAK] = core.peak_bytes_fp;
		core_unlock_tables();
	}
	m->v[MF_CGROUP_USAGE] = cgroup_usage();
	m->v[MF_CGROUP_LIMIT] = cgroup_limit();
}

void memacct_read_cheap(struct memfacts *m)
{
	read_common(m);
	read_status(m);
}

void memacct_read(struct memfacts *m)
{
	read_common(m);
	read_rollup(m);
	tstate_enter(); /* the allocators' statistics functions may allocate internally */
	switch (kind) {
	case AK_JEMALLOC: read_jemalloc(m); break;
	case AK_TCMALLOC: read_tcmalloc(m); break;
	case AK_GLIBC: read_glibc(m); break;
	default: break;
	}
	tstate_leave();
}

void memacct_json(struct jsonw *w, const struct memfacts *m)
{
	jsonw_str(w, "allocator", m->allocator ? m->allocator : "");
	for (int i = 0; i < MF_COUNT; i++)
		jsonw_u64(w, memfacts_name(i), m->v[i]);
}
