/*
 * unwind.c - stack capture for samples (unwind.h): libunwind's unw_backtrace or a checked
 * frame-pointer walk, and the stripping of allocator frames. Not symbolization: only raw
 * return addresses are recorded; the CLI resolves them offline.
 */
#define UNW_LOCAL_ONLY
#include "unwind.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include <libunwind.h>

#include "core.h"
#include "options.h"
#include "real.h"
#include "sys.h"

extern char __start_heaptap_text[] __attribute__((visibility("hidden")));
extern char __stop_heaptap_text[] __attribute__((visibility("hidden")));

#define MAX_RANGES 16
static struct {
	uintptr_t lo, hi;
} ranges[MAX_RANGES];
static int nranges;

static const char *const new_syms[] = {
	"_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
	"_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
	"_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
};

/* dl_iterate_phdr's count of objects ever loaded, when the ranges were last looked up */
static unsigned long long seen_adds;
static int refreshing; /* atomic: one thread refreshes at a time */

static int read_adds(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
		*(unsigned long long *)arg = info->dlpi_adds;
	return 1; /* the first object is enough */
}

/* Adds the ranges of the operator new variants visible through handle, skipping known ones. */
static void add_ranges(void *handle, int *n)
{
	for (size_t i = 0; i < sizeof new_syms / sizeof new_syms[0] && *n < MAX_RANGES; i++) {
		void *addr = dlsym(handle, new_syms[i]);
		if (!addr)
			continue;
		Dl_info info;
		const ElfW(Sym) *sym = NULL;
		if (!dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !info.dli_saddr)
			continue;
		uintptr_t lo = (uintptr_t)info.dli_saddr;
		uintptr_t hi = lo + (sym->st_size ? sym->st_size : 1);
		int dup = 0;
		for (int k = 0; k < *n; k++)
			dup |= ranges[k].lo == lo;
		if (dup)
			continue;
		ranges[*n].lo = lo;
		ranges[*n].hi = hi;
		(*n)++;
	}
}

struct cxx_libs {
	char path[4][512];
	int n;
};

static int find_cxx(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct cxx_libs *c = arg;
	if (c->n < 4 && info->dlpi_name && strstr(info->dlpi_name, "libstdc++"))
		sys_strlcpy(c->path[c->n++], info->dlpi_name, sizeof c->path[0]);
	return 0;
}

void unwind_init(void)
{
	unsigned long long adds = 0;
	dl_iterate_phdr(read_adds, &adds);
	__atomic_store_n(&seen_adds, adds, __ATOMIC_RELAXED);
	/* readers see either the old count or the new one; entries are written in between */
	__atomic_store_n(&nranges, 0, __ATOMIC_RELEASE);
	int n = 0;
	add_ranges(RTLD_DEFAULT, &n);
	/* a libstdc++ loaded with RTLD_LOCAL (by a dlopen'ed plugin) is not in the global scope */
	struct cxx_libs libs;
	libs.n = 0;
	dl_iterate_phdr(find_cxx, &libs);
	for (int i = 0; i < libs.n; i++) {
		void *h = dlopen(libs.path[i], RTLD_LAZY | RTLD_NOLOAD);
		if (!h)
			continue;
		add_ranges(h, &n);
		real.dlclose(h); /* not our dlclose: nothing is unloaded here */
	}
	__atomic_store_n(&nranges, n, __ATOMIC_RELEASE);
}

void unwind_refresh(void)
{
	unsigned long long adds = 0;
	dl_iterate_phdr(read_adds, &adds);
	if (adds == __atomic_load_n(&seen_adds, __ATOMIC_RELAXED))
		return;
	if (__atomic_exchange_n(&refreshing, 1, __ATOMIC_ACQUIRE))
		return;
	unwind_init();
	__atomic_store_n(&refreshing, 0, __ATOMIC_RELEASE);
}

int unwind_is_internal(uintptr_t pc)
{
	if (pc >= (uintptr_t)__start_heaptap_text && pc < (uintptr_t)__stop_heaptap_text)
		return 1;
	int n = __atomic_load_n(&nranges, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n; i++)
		if (pc > ranges[i].lo && pc <= ranges[i].hi)
			return 1;
	return 0;
}

/* Stack bounds of this thread for the frame-pointer walk (found once per thread). */
static __thread uintptr_t stack_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t stack_hi __attribute__((tls_model("initial-exec")));

static void find_stack_bounds(void)
{
	pthread_attr_t attr;
	void *addr = NULL;
	size_t size = 0;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		pthread_attr_getstack(&attr, &addr, &size);
		pthread_attr_destroy(&attr);
	}
	if (addr && size) {
		stack_lo = (uintptr_t)addr;
		stack_hi = (uintptr_t)addr + size;
	} else {
		/* unknown: allow 8 MiB above the current frame */
		stack_lo = (uintptr_t)__builtin_frame_address(0);
		stack_hi = stack_lo + (8u << 20);
	}
}

HEAPTAP_TEXT static uint32_t walk_fp(uintptr_t *pcs, uint32_t max)
{
	if (!stack_hi)
		find_stack_bounds();
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
	uint32_t n = 0;
	uintptr_t lo = fp;
	while (n < max) {
		if (fp < lo || fp + 16 > stack_hi || fp < stack_lo || (fp & 7))
			break;
		const uintptr_t *frame = (const uintptr_t *)fp;
		uintptr_t ret = frame[1];
		uintptr_t next = frame[0];
		if (ret < 4096)
			break;
		pcs[n++] = ret;
		if (next <= fp)
			break;
		lo = fp + 16;
		fp = next;
	}
	return n;
}

uint32_t unwind_strip(const uintptr_t *pcs, uint32_t depth)
{
	uint32_t skip = 0;
	while (skip + 1 < depth && unwind_is_internal(pcs[skip]))
		skip++;
	return skip;
}

HEAPTAP_TEXT uint32_t unwind_capture(uintptr_t *pcs, uint32_t max, int mode)
{
	/* room for our own frames on top of the max user frames */
	enum { SLACK = 16 };
	uintptr_t raw[256 + SLACK];
	uint32_t want = max + SLACK;
	if (want > sizeof raw / sizeof raw[0])
		want = sizeof raw / sizeof raw[0];
	uint32_t n;
	if (mode == UNWIND_FP) {
		n = walk_fp(raw, want);
	} else {
		int r = unw_backtrace((void **)raw, (int)want);
		n = r > 0 ? (uint32_t)r : 0;
	}
	uint32_t skip = 0;
	while (skip < n && unwind_is_internal(raw[skip]))
		skip++;
	if (skip == n && n > 0)
		skip = n - 1; /* keep something rather than nothing */
	uint32_t out = n - skip;
	if (out > max)
		out = max;
	memcpy(pcs, raw + skip, out * sizeof *pcs);
	return out;
}
