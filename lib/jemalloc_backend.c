/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * jemalloc_backend.c - the mallctl calls of jemalloc_backend.h: prof.active, prof.dump,
 * prof.reset, prof.lg_sample, opt.prof and malloc_stats_print("J") written into an outbuf.
 *
 * It is not a jemalloc replacement and knows nothing of heaptap's own tables; backend.c picks
 * between it and the collector.
 */
#include "jemalloc_backend.h"
#include "../base/bisect.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "../base/allocsym.h"
#include "../base/elffile.h"
#include "rundir.h"
#include "sys.h"

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef void (*stats_fn)(void (*)(void *, const char *), void *, const char *);

static mallctl_fn je_ctl;
static stats_fn je_stats;
static int detected = -1;
static int prof_on;

/* Where jemalloc was found, for the messages and the frame ranges. */
static char je_path[512];           /* the file holding it ("" before detection) */
static char je_prefix[ALLOCSYM_PREFIX_MAX];
static uintptr_t je_base;           /* its load bias (dlpi_addr) */
static int je_shared;               /* 1: a shared library of its own (libjemalloc.so) */
static char other_alloc[32];        /* another private allocator's marker in the executable */
static const char *other_name;

/* Address ranges of allocator machinery (jemalloc's functions, Rust's allocator shims): the
   frames a jemalloc stack starts with. Sorted by lo, in an anonymous mapping. */
struct range {
	uintptr_t lo, hi;
};
static struct range *ranges;
static size_t nranges, ranges_cap;

static int own_object(uintptr_t base)
{
	Dl_info me;
	return dladdr((void *)jemalloc_backend_detect, &me) && (uintptr_t)me.dli_fbase == base;
}

static void add_range(uintptr_t lo, uintptr_t hi)
{
	if (nranges == ranges_cap) {
		size_t ncap = ranges_cap ? ranges_cap * 2 : 512;
		struct range *n = sys_map(ncap * sizeof *n);
		if (!n)
			return;
		if (ranges) {
			memcpy(n, ranges, nranges * sizeof *n);
			sys_unmap(ranges, ranges_cap * sizeof *n);
		}
		ranges = n;
		ranges_cap = ncap;
	}
	/* insertion sort: a few thousand at start-up */
	size_t i = nranges++;
	while (i > 0 && ranges[i - 1].lo > lo) {
		ranges[i] = ranges[i - 1];
		i--;
	}
	ranges[i].lo = lo;
	ranges[i].hi = hi;
}

/* bisect key: range i's start */
static uint64_t range_lo(const void *ctx, size_t i)
{
	return ((const struct range *)ctx)[i].lo;
}

int jemalloc_backend_is_machinery(uintptr_t pc)
{
	size_t lo = bisect_count_le(nranges, pc, range_lo, ranges);
	/* ranges may nest (aliases): look back a little for one that covers pc */
	for (size_t i = lo; i-- > 0 && lo - i <= 8;)
		if (pc < ranges[i].hi && pc >= ranges[i].lo)
			return 1;
	return 0;
}

/* The machinery functions of one loaded file, by name (.symtab, else .dynsym). */
static void add_machinery(const char *path, uintptr_t base)
{
	struct elffile f;
	struct elffile_symtab t;
	if (elffile_open(&f, path) != 0)
		return;
	if (elffile_symtab(&f, SHT_SYMTAB, &t) == 0 || elffile_symtab(&f, SHT_DYNSYM, &t) == 0)
		for (size_t i = 0; i < t.nsyms; i++)
			if (elffile_sym_is_func(&t, i) && t.syms[i].st_size &&
			    allocsym_is_machinery(elffile_sym_name(&t, i), je_prefix))
				add_range(base + t.syms[i].st_value, base + t.syms[i].st_value + t.syms[i].st_size);
	elffile_close(&f);
}

struct scan_ctx {
	int nobj;
	const char *exe;
	uintptr_t exe_base;
};

static int scan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan_ctx *c = arg;
	(void)size;
	int main_prog = c->nobj++ == 0;
	const char *path = main_prog ? c->exe : info->dlpi_name;
	if (main_prog)
		c->exe_base = info->dlpi_addr;
	if (!path || !*path || own_object(info->dlpi_addr))
		return 0;
	struct elffile f;
	if (elffile_open(&f, path) != 0)
		return 0;
	struct allocsym_found a;
	allocsym_scan(&f, &a);
	elffile_close(&f);
	if (main_prog && a.other[0] && !a.jemalloc) {
		sys_strlcpy(other_alloc, a.other, sizeof other_alloc);
		other_name = a.other_name;
	}
	if (!a.jemalloc || je_ctl)
		return 0;
	uintptr_t ctl = info->dlpi_addr + a.je_mallctl, stats = info->dlpi_addr + a.je_stats_print;
	memcpy(&je_ctl, &ctl, sizeof ctl); /* an address to a function pointer, without a cast */
	if (a.je_stats_print)
		memcpy(&je_stats, &stats, sizeof stats);
	sys_strlcpy(je_path, path, sizeof je_path);
	sys_strlcpy(je_prefix, a.je_prefix, sizeof je_prefix);
	je_base = info->dlpi_addr;
	je_shared = !main_prog;
	if (je_shared)
		/* the whole library is the allocator's */
		for (int i = 0; i < info->dlpi_phnum; i++) {
			const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
			if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
				add_range(info->dlpi_addr + ph->p_vaddr, info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
		}
	return 0;
}

int jemalloc_backend_detect(void)
{
	if (detected >= 0)
		return detected && prof_on;
	static char exe[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	struct scan_ctx c = {0, exe, 0};
	dl_iterate_phdr(scan_object, &c);
	if (je_ctl) {
		/* the executable's Rust shims (or C wrappers) lead the stacks too */
		add_machinery(je_path, je_base);
		if (je_shared && exe[0])
			add_machinery(exe, c.exe_base);
	}
	detected = je_ctl != NULL;
	prof_on = detected && jemalloc_backend_bool("opt.prof") == 1;
	return detected && prof_on;
}

/* 1 when the jemalloc found is the allocator heaptap's own malloc forwards to (the next malloc
   after libheaptap.so is in the same object as its mallctl): the program's calls reach heaptap
   first, so heaptap sees them whatever jemalloc's profiling. */
static int below_heaptap(void)
{
	Dl_info a, b;
	void *next = dlsym(RTLD_NEXT, "malloc");
	return je_shared && next && dladdr((void *)je_ctl, &a) && dladdr(next, &b) &&
	       a.dli_fbase == b.dli_fbase;
}

void jemalloc_backend_explain(void)
{
	char var[ALLOCSYM_PREFIX_MAX + 16];
	if (!je_ctl) {
		if (other_alloc[0]) {
			char exe[512];
			ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
			exe[n > 0 ? n : 0] = 0;
			char what[96];
			struct outbuf ob;
			outbuf_init(&ob, what, sizeof what - 1, -1);
			outbuf_puts(&ob, " allocates through its own ");
			outbuf_puts(&ob, other_name);
			outbuf_puts(&ob, " (");
			outbuf_puts(&ob, other_alloc);
			outbuf_puts(&ob, ")");
			what[ob.len] = 0;
			sys_log(exe, what, ", which heaptap cannot see: its allocations are missing from the"
			        " profile (build it with the system allocator, or with jemalloc and profiling,"
			        " to profile it)");
		}
		return;
	}
	allocsym_conf_var(je_prefix, var, sizeof var);
	char head[700];
	struct outbuf ob;
	outbuf_init(&ob, head, sizeof head - 1, -1);
	outbuf_puts(&ob, je_path);
	outbuf_puts(&ob, " allocates through its own jemalloc (");
	outbuf_puts(&ob, je_prefix);
	outbuf_puts(&ob, "mallctl)");
	head[ob.len] = 0;
	if (prof_on) {
		sys_log("profiling through the jemalloc of ", je_path, NULL);
	} else if (below_heaptap()) {
		/* heaptap's malloc comes first and calls this jemalloc: heaptap sees everything */
	} else if (jemalloc_backend_bool("config.prof") != 1) {
		sys_log(head, ", built without profiling: heaptap cannot see its allocations; rebuild it"
		        " with profiling (tikv-jemallocator: the cargo feature `profiling`; jemalloc:"
		        " ./configure --enable-prof)", NULL);
	} else {
		char fix[160];
		outbuf_init(&ob, fix, sizeof fix - 1, -1);
		outbuf_puts(&ob, ", with profiling off: heaptap cannot see its allocations; start it with ");
		outbuf_puts(&ob, var);
		outbuf_puts(&ob, "=prof:true,prof_active:false");
		fix[ob.len] = 0;
		sys_log(head, fix, " (heaptap switches sampling on), or under heaptap run");
	}
}

const char *jemalloc_backend_prefix(void)
{
	return je_prefix;
}

int jemalloc_backend_present(void)
{
	return detected > 0;
}

int jemalloc_backend_enabled(void)
{
	return detected > 0 && prof_on;
}

int jemalloc_backend_ctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen)
{
	return je_ctl ? je_ctl(name, oldp, oldlenp, newp, newlen) : ENOENT;
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

static uint64_t dump_seq;

int jemalloc_backend_dump_manual(char *path, size_t cap)
{
	char name[96];
	struct outbuf ob;
	outbuf_init(&ob, name, sizeof name - 1, -1);
	outbuf_puts(&ob, "jeprof.");
	outbuf_u64(&ob, (uint64_t)getpid());
	outbuf_putc(&ob, '.');
	outbuf_u64(&ob, __atomic_fetch_add(&dump_seq, 1, __ATOMIC_RELAXED));
	outbuf_puts(&ob, ".m.heap");
	name[ob.len] = 0;
	if (!rundir_path(path, cap, name))
		return -errno;
	return jemalloc_backend_dump(path);
}
