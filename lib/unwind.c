/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind.c - stack capture for samples (unwind.h): cfi.c's DWARF walk or a checked
 * frame-pointer walk, the bounds of the thread's stack they read, and the stripping of
 * allocator frames. Not symbolization: only raw return addresses are recorded; the CLI
 * resolves them offline. No libunwind, no malloc, no descriptors.
 */
#include "unwind.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "cfi.h"
#include "core.h"
#include "options.h"

extern char __start_heaptap_text[] __attribute__((visibility("hidden")));
extern char __stop_heaptap_text[] __attribute__((visibility("hidden")));

#define MAX_RANGES 16
static struct {
	uintptr_t lo, hi;
} ranges[MAX_RANGES];
static int nranges;
/* the hull of ranges[0..nranges): most user return addresses (a PIE program at 0x55..., below
   every shared object) fall outside it and need no walk through the entries */
static uintptr_t hull_lo, hull_hi;

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

/* ---- operator new look-up in the loaded objects' own dynamic symbol tables ----
   No dlsym, no dlopen: they may allocate and take the loader lock, and a sample can be taken
   inside the loader. Reading the tables of the objects dl_iterate_phdr lists needs neither. */

struct dynsyms {
	uintptr_t base;
	const ElfW(Sym) *symtab;
	const char *strtab;
	const uint32_t *gnu_hash;
	const uint32_t *sysv_hash;
};

/* A d_ptr of the dynamic section: glibc relocates them in place on x86-64, the vDSO's are
   offsets. */
static uintptr_t dyn_ptr(uintptr_t base, ElfW(Addr) v)
{
	return v < base ? base + v : v;
}

static const ElfW(Sym) *defined(const struct dynsyms *d, uint32_t idx, const char *name)
{
	const ElfW(Sym) *sym = &d->symtab[idx];
	if (sym->st_shndx == SHN_UNDEF || sym->st_value == 0 ||
	    ELF64_ST_TYPE(sym->st_info) != STT_FUNC)
		return NULL;
	return strcmp(d->strtab + sym->st_name, name) == 0 ? sym : NULL;
}

static const ElfW(Sym) *lookup(const struct dynsyms *d, const char *name)
{
	if (d->gnu_hash) {
		const uint32_t *gh = d->gnu_hash;
		uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2];
		if (nbuckets == 0)
			return NULL;
		const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gh + 4) + bloom_size);
		const uint32_t *chain = buckets + nbuckets;
		uint32_t h = 5381;
		for (const unsigned char *c = (const unsigned char *)name; *c; c++)
			h = h * 33 + *c;
		uint32_t idx = buckets[h % nbuckets];
		if (idx < symoffset)
			return NULL;
		for (;; idx++) {
			uint32_t ch = chain[idx - symoffset];
			if ((ch | 1) == (h | 1)) {
				const ElfW(Sym) *sym = defined(d, idx, name);
				if (sym)
					return sym;
			}
			if (ch & 1)
				return NULL;
		}
	}
	if (d->sysv_hash) {
		uint32_t nbucket = d->sysv_hash[0];
		const uint32_t *bucket = d->sysv_hash + 2, *chain = bucket + nbucket;
		uint32_t h = 0;
		for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
			h = (h << 4) + *c;
			uint32_t g = h & 0xf0000000u;
			if (g)
				h ^= g >> 24;
			h &= ~g;
		}
		if (nbucket == 0)
			return NULL;
		for (uint32_t idx = bucket[h % nbucket]; idx != 0; idx = chain[idx]) {
			const ElfW(Sym) *sym = defined(d, idx, name);
			if (sym)
				return sym;
		}
	}
	return NULL;
}

/* The dynamic symbol table of a loaded object; 0, or -1 when it has none. */
static int read_dynsyms(const struct dl_phdr_info *info, struct dynsyms *d)
{
	memset(d, 0, sizeof *d);
	d->base = info->dlpi_addr;
	const ElfW(Dyn) *dyn = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return -1;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB: d->symtab = (const ElfW(Sym) *)dyn_ptr(d->base, dyn->d_un.d_ptr); break;
		case DT_STRTAB: d->strtab = (const char *)dyn_ptr(d->base, dyn->d_un.d_ptr); break;
		case DT_GNU_HASH: d->gnu_hash = (const uint32_t *)dyn_ptr(d->base, dyn->d_un.d_ptr); break;
		case DT_HASH: d->sysv_hash = (const uint32_t *)dyn_ptr(d->base, dyn->d_un.d_ptr); break;
		default: break;
		}
	}
	return d->symtab && d->strtab && (d->gnu_hash || d->sysv_hash) ? 0 : -1;
}

struct sym_find {
	const char *name;
	uintptr_t addr;
};

static int find_symbol(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct sym_find *f = arg;
	struct dynsyms d;
	if (read_dynsyms(info, &d) != 0)
		return 0;
	const ElfW(Sym) *sym = lookup(&d, f->name);
	if (!sym)
		return 0;
	f->addr = d.base + sym->st_value;
	return 1;
}

static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	int *n = arg;
	struct dynsyms d;
	if (read_dynsyms(info, &d) != 0)
		return 0;
	for (size_t i = 0; i < sizeof new_syms / sizeof new_syms[0] && *n < MAX_RANGES; i++) {
		const ElfW(Sym) *sym = lookup(&d, new_syms[i]);
		if (!sym)
			continue;
		uintptr_t lo = d.base + sym->st_value;
		int dup = 0;
		for (int k = 0; k < *n; k++)
			dup |= ranges[k].lo == lo;
		if (dup)
			continue;
		ranges[*n].lo = lo;
		ranges[*n].hi = lo + (sym->st_size ? sym->st_size : 1);
		(*n)++;
	}
	return 0;
}

void unwind_init(void)
{
	static int cfi_ready;
	if (!__atomic_exchange_n(&cfi_ready, 1, __ATOMIC_ACQ_REL)) {
		/* glibc 2.35's lock-free object look-up, taken from ld.so's symbol table in memory:
		   a link-time reference would tie the library to GLIBC_2.35 (docs/INTERNALS.md
		   "Portability"); without it cfi.c asks dl_iterate_phdr */
		struct sym_find f = { "_dl_find_object", 0 };
		dl_iterate_phdr(find_symbol, &f);
		(void)cfi_init((void *)f.addr); /* on failure every capture walks frame pointers */
	}
	unsigned long long adds = 0;
	dl_iterate_phdr(read_adds, &adds);
	__atomic_store_n(&seen_adds, adds, __ATOMIC_RELAXED);
	/* readers see either the old count or the new one; entries are written in between */
	__atomic_store_n(&nranges, 0, __ATOMIC_RELEASE);
	int n = 0;
	/* every object: libstdc++ wherever it was loaded from (RTLD_LOCAL plugins included), and a
	   program or library that replaces operator new */
	dl_iterate_phdr(add_object, &n);
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < n; i++) {
		lo = ranges[i].lo < lo ? ranges[i].lo : lo;
		hi = ranges[i].hi > hi ? ranges[i].hi : hi;
	}
	__atomic_store_n(&hull_lo, lo, __ATOMIC_RELAXED);
	__atomic_store_n(&hull_hi, hi, __ATOMIC_RELAXED);
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
	if (pc <= __atomic_load_n(&hull_lo, __ATOMIC_RELAXED) ||
	    pc > __atomic_load_n(&hull_hi, __ATOMIC_RELAXED))
		return 0;
	for (int i = 0; i < n; i++)
		if (pc > ranges[i].lo && pc <= ranges[i].hi)
			return 1;
	return 0;
}

/* glibc's: the main thread's stack pointer at start-up (argc's address); its frames lie below */
extern void *__libc_stack_end;

/* The top of this thread's stack (found once per thread), above which no walk reads. Not
   pthread_getattr_np: it allocates (and, for the main thread, reads /proc/self/maps through
   stdio). glibc puts a thread's descriptor (pthread_self) at the top of the stack it gives
   the thread, above the static TLS, the user's stacks included; the main thread's descriptor
   is elsewhere and its stack ends at __libc_stack_end. A thread made by other means (a raw
   clone, a stack the program switched to) fails both tests: its bound is then the end of the
   mapped pages above the current frame (mincore, at most 8 MiB), so a walk may read only
   memory that is there. 0 when even that fails (then nothing is walked). */
static __thread uintptr_t stack_hi __attribute__((tls_model("initial-exec")));
static __thread int stack_known __attribute__((tls_model("initial-exec")));

/* The end of the run of mapped pages from here's page up, at most limit bytes: mincore
   fails with ENOMEM on a range with a hole. */
static uintptr_t mapped_top(uintptr_t here, uintptr_t limit)
{
	enum { PAGE = 4096, CHUNK = 64 };
	unsigned char vec[CHUNK];
	uintptr_t base = here & ~(uintptr_t)(PAGE - 1), top = base;
	while (top - base + CHUNK * PAGE <= limit && mincore((void *)top, CHUNK * PAGE, vec) == 0)
		top += CHUNK * PAGE;
	while (top - base < limit && mincore((void *)top, PAGE, vec) == 0)
		top += PAGE;
	return top > here + 16 ? top : 0;
}

static uintptr_t stack_top(void)
{
	if (stack_known)
		return stack_hi;
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	uintptr_t self = (uintptr_t)pthread_self();
	uintptr_t end = (uintptr_t)__libc_stack_end;
	const uintptr_t limit = (uintptr_t)1 << 30; /* no stack is this deep */
	if (self > here && self - here < limit)
		stack_hi = self;
	else if (end > here && end - here < limit)
		stack_hi = end;
	else
		stack_hi = mapped_top(here, (uintptr_t)8 << 20);
	stack_known = 1;
	return stack_hi;
}

/* The frame-pointer chain from the frame at fp, reading only below hi: the return addresses,
   outermost last. */
static uint32_t fp_chain(uintptr_t *pcs, uint32_t max, uintptr_t fp, uintptr_t hi)
{
	uint32_t n = 0;
	uintptr_t lo = fp;
	while (n < max) {
		if (fp < lo || fp + 16 > hi || (fp & 7))
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

HEAPTAP_TEXT uint32_t unwind_walk_fp(uintptr_t *pcs, uint32_t max)
{
	uintptr_t hi = stack_top();
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
	if (!hi) /* top unknown: allow 8 MiB above this frame, as a main thread's stack may have */
		hi = fp + (8u << 20);
	return fp_chain(pcs, max, fp, hi);
}

uint32_t unwind_walk_context(uintptr_t *pcs, uint32_t max, uintptr_t pc, uintptr_t sp,
                             uintptr_t bp, int *fell_back)
{
	*fell_back = 0;
	if (max == 0)
		return 0;
	uintptr_t hi = stack_top();
	/* an sp outside this thread's stack (a sigaltstack, a coroutine's stack): the rules
	   cannot be checked against bounds; frame pointers within 8 MiB above sp */
	if (hi && sp < hi && hi - sp < ((uintptr_t)1 << 30)) {
		uint32_t n = cfi_backtrace_context(pcs, max, pc, sp, bp, sp, hi);
		if (n)
			return n;
	} else {
		hi = sp + (8u << 20);
	}
	*fell_back = 1;
	pcs[0] = pc;
	if (bp < sp || bp >= hi)
		return 1;
	return 1 + fp_chain(pcs + 1, max - 1, bp, hi);
}

HEAPTAP_TEXT uint32_t unwind_walk_cfi(uintptr_t *raw, uint32_t want, const void *from)
{
	uintptr_t hi = stack_top();
	if (!hi)
		return 0;
	/* cfi_backtrace checks that from lies between this frame and the top; it answers 0 only
	   when it cannot start */
	uint32_t n = cfi_backtrace(raw, want, from, (uintptr_t)__builtin_frame_address(0), hi);
	return n ? n : unwind_walk_fp(raw, want);
}

uint32_t unwind_strip(const uintptr_t *pcs, uint32_t depth)
{
	uint32_t skip = 0;
	while (skip + 1 < depth && unwind_is_internal(pcs[skip]))
		skip++;
	return skip;
}

uint32_t unwind_finish(uintptr_t *pcs, uint32_t max, const uintptr_t *raw, uint32_t n)
{
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
