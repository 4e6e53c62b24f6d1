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
#include <string.h>

#include <libunwind.h>

#include "core.h"
#include "options.h"

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

void unwind_init(void)
{
	nranges = 0;
	for (size_t i = 0; i < sizeof new_syms / sizeof new_syms[0] && nranges < MAX_RANGES; i++) {
		void *addr = dlsym(RTLD_DEFAULT, new_syms[i]);
		if (!addr)
			continue;
		Dl_info info;
		const ElfW(Sym) *sym = NULL;
		if (!dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !info.dli_saddr)
			continue;
		uintptr_t lo = (uintptr_t)info.dli_saddr;
		uintptr_t hi = lo + (sym->st_size ? sym->st_size : 1);
		ranges[nranges].lo = lo;
		ranges[nranges].hi = hi;
		nranges++;
	}
}

int unwind_is_internal(uintptr_t pc)
{
	if (pc >= (uintptr_t)__start_heaptap_text && pc < (uintptr_t)__stop_heaptap_text)
		return 1;
	for (int i = 0; i < nranges; i++)
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
