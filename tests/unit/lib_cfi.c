/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_cfi.c - unit test of the collector's DWARF CFI unwinder (lib/cfi.c) against libgcc's
 * (glibc's backtrace()): stacks through this file's functions (some built without frame
 * pointers, one recursing with a variable-size frame) and through glibc's qsort (no frame
 * pointers, a callback) must come out frame for frame as backtrace() gives them, from the
 * first capture (rules parsed) and from the cached rules, and so must a walk started at an
 * outer frame's address and a capture inside a signal handler (through the kernel's signal
 * frame) and through asm frames whose CFA is an expression (a realigned stack: the entry
 * rsp in a slot, GCC's DRAP); a frame without unwind information (hand-written asm) is
 * stepped by its frame pointer and the walk goes on to main's callers; after cfi_forget_all the rules are parsed
 * again.
 */
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/cfi.h"
#include "check.h"

#define MAXF 64

struct capture {
	uintptr_t cfi[MAXF], unw[MAXF], from[MAXF];
	uint32_t ncfi, nfrom;
	int nunw;
};

static uintptr_t stack_hi;
static const void *outer_frame; /* mid_fp's frame address, a start for cfi_backtrace */

static void find_bounds(void)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	pthread_getattr_np(pthread_self(), &attr);
	pthread_attr_getstack(&attr, &addr, &size);
	pthread_attr_destroy(&attr);
	stack_hi = (uintptr_t)addr + size;
}

static volatile int sink;

/* Both unwinders from the same frame: element 0 differs (each is the return address of its own
   call), every caller frame after it must match. */
__attribute__((noinline)) static void take(struct capture *c)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	c->ncfi = cfi_backtrace(c->cfi, MAXF, NULL, here, stack_hi);
	c->nunw = backtrace((void **)c->unw, MAXF);
	/* under AddressSanitizer backtrace() is intercepted: its frame comes first; align the
	   two captures on the caller of take() */
	for (int k = 2; k < 4 && k < c->nunw; k++)
		if (c->unw[k] == c->cfi[1] && c->unw[1] != c->cfi[1]) {
			memmove(c->unw + 1, c->unw + k, (size_t)(c->nunw - k) * sizeof c->unw[0]);
			c->nunw -= k - 1;
		}
	c->nfrom = outer_frame ? cfi_backtrace(c->from, MAXF, outer_frame, here, stack_hi) : 0;
	sink++;
}

static int same(const struct capture *c, const char *what)
{
	int ok = c->ncfi > 3 && c->nunw > 3 && (int)c->ncfi == c->nunw;
	for (uint32_t i = 1; ok && i < c->ncfi; i++)
		ok = c->cfi[i] == c->unw[i];
	CHECK(ok, "%s: cfi depth %u, backtrace() depth %d", what, c->ncfi, c->nunw);
	if (!ok)
		for (int i = 0; i < MAXF && (i < (int)c->ncfi || i < c->nunw); i++)
			fprintf(stderr, "  %2d cfi %#lx unw %#lx\n", i,
			        i < (int)c->ncfi ? (unsigned long)c->cfi[i] : 0ul,
			        i < c->nunw ? (unsigned long)c->unw[i] : 0ul);
	return ok;
}

__attribute__((noinline, optimize("omit-frame-pointer"))) static void leaf_nofp(struct capture *c)
{
	take(c);
	sink++;
}

__attribute__((noinline, optimize("omit-frame-pointer"))) static void mid_nofp(struct capture *c,
                                                                               int depth)
{
	/* a frame of its own size at each level: the compiler then keeps rbp as the CFA's base */
	volatile char *pad = __builtin_alloca(40 + 8 * (unsigned)(depth & 3));
	pad[0] = (char)depth;
	if (depth > 0)
		mid_nofp(c, depth - 1);
	else
		leaf_nofp(c);
	sink += pad[0];
}

__attribute__((noinline)) static void mid_fp(struct capture *c, int depth)
{
	outer_frame = __builtin_frame_address(0);
	mid_nofp(c, depth);
	outer_frame = NULL;
	sink++;
}

/* The capture started at mid_fp's frame is backtrace()'s from mid_fp's return address on. */
static void same_from(const struct capture *c)
{
	int j = 0;
	while (j < c->nunw && c->unw[j] != c->from[0])
		j++;
	int ok = c->nfrom > 0 && j < c->nunw && (int)c->nfrom == c->nunw - j;
	for (uint32_t i = 0; ok && i < c->nfrom; i++)
		ok = c->from[i] == c->unw[j + (int)i];
	CHECK(ok, "walk from mid_fp's frame: %u frames, backtrace() has %d from index %d", c->nfrom,
	      c->nunw - j, j);
}

static struct capture *in_sort;
static int sorted_captures;

static int cmp(const void *a, const void *b)
{
	if (in_sort && !sorted_captures++)
		take(in_sort);
	return *(const int *)a - *(const int *)b;
}

static struct capture sig_cap;

static void on_signal(int sig)
{
	(void)sig;
	take(&sig_cap);
}

/* A function without unwind information (no .cfi directives, so no FDE) that keeps a frame
   pointer and calls fn(c). */
__asm__(".text\n"
        ".globl nocfi_trampoline\n"
        ".type nocfi_trampoline, @function\n"
        "nocfi_trampoline:\n"
        "\tpush %rbp\n"
        "\tmov %rsp, %rbp\n"
        "\tcall *%rsi\n"
        "\tpop %rbp\n"
        "\tret\n"
        ".size nocfi_trampoline, .-nocfi_trampoline\n");
void nocfi_trampoline(struct capture *c, void (*fn)(struct capture *));

/* CFA expressions the walk evaluates. deref_trampoline realigns rsp and keeps the entry rsp
   in a stack slot, like OpenSSL's asm: CFA = *(rsp + 8) + 8. drap_trampoline is GCC's
   realigned frame (DRAP): CFA = *(rbp - 8), the caller's rbp saved at the address in rbp. */
__asm__(".text\n"
        ".globl deref_trampoline\n"
        ".type deref_trampoline, @function\n"
        "deref_trampoline:\n"
        "\t.cfi_startproc\n"
        "\tmov %rsp, %rax\n"
        "\tsub $40, %rsp\n"
        "\t.cfi_adjust_cfa_offset 40\n"
        "\tand $-32, %rsp\n"
        "\tmov %rax, 8(%rsp)\n"
        "\t.cfi_escape 0x0f, 0x05, 0x77, 0x08, 0x06, 0x23, 0x08\n"
        "\tcall *%rsi\n"
        "\tmov 8(%rsp), %rsp\n"
        "\t.cfi_def_cfa rsp, 8\n"
        "\tret\n"
        "\t.cfi_endproc\n"
        ".size deref_trampoline, .-deref_trampoline\n"
        ".globl drap_trampoline\n"
        ".type drap_trampoline, @function\n"
        "drap_trampoline:\n"
        "\t.cfi_startproc\n"
        "\tlea 8(%rsp), %r10\n"
        "\t.cfi_def_cfa r10, 0\n"
        "\tand $-32, %rsp\n"
        "\tpushq -8(%r10)\n"
        "\tpush %rbp\n"
        "\tmov %rsp, %rbp\n"
        "\t.cfi_escape 0x10, 0x06, 0x02, 0x76, 0x00\n"
        "\tpush %r10\n"
        "\t.cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06\n"
        "\tsub $8, %rsp\n"
        "\tcall *%rsi\n"
        "\tadd $8, %rsp\n"
        "\tpop %r10\n"
        "\t.cfi_def_cfa r10, 0\n"
        "\tpop %rbp\n"
        "\tlea -8(%r10), %rsp\n"
        "\t.cfi_def_cfa rsp, 8\n"
        "\tret\n"
        "\t.cfi_endproc\n"
        ".size drap_trampoline, .-drap_trampoline\n");
void deref_trampoline(struct capture *c, void (*fn)(struct capture *));
void drap_trampoline(struct capture *c, void (*fn)(struct capture *));

__attribute__((noinline)) static void via_asm(struct capture *c)
{
	take(c);
	sink++;
}

int main(void)
{
	find_bounds();
	CHECK(cfi_init(NULL) == 0, "cfi_init"); /* objects found through dl_iterate_phdr */
	struct cfi_counts before, after;
	struct capture c;

	/* through frames with and without frame pointers, cold then warm */
	for (int round = 0; round < 2; round++) {
		cfi_get_counts(&before);
		memset(&c, 0, sizeof c);
		mid_fp(&c, 5);
		same(&c, round ? "nested, cached" : "nested, first");
		same_from(&c);
		cfi_get_counts(&after);
		CHECK(after.fallbacks == before.fallbacks, "capture given up");
		if (round == 0)
			CHECK(after.parses > before.parses, "first capture parses the CFI");
		else
			CHECK(after.parses == before.parses, "second capture parsed %llu rules again",
			      (unsigned long long)(after.parses - before.parses));
	}

	/* through glibc's qsort into a callback */
	int v[64];
	for (int i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	memset(&c, 0, sizeof c);
	in_sort = &c;
	qsort(v, 64, sizeof v[0], cmp);
	in_sort = NULL;
	same(&c, "qsort callback");

	/* a signal frame: stepped through the kernel's ucontext, on through raise() to main */
	cfi_get_counts(&before);
	signal(SIGUSR1, on_signal);
	raise(SIGUSR1);
	cfi_get_counts(&after);
	same(&sig_cap, "signal handler");
	CHECK(after.fallbacks == before.fallbacks, "signal handler capture counted as a fallback");

	/* CFA expressions, frame for frame as libgcc evaluates them, without a fallback */
	cfi_get_counts(&before);
	memset(&c, 0, sizeof c);
	deref_trampoline(&c, via_asm);
	same(&c, "CFA = *(rsp + 8) + 8");
	memset(&c, 0, sizeof c);
	drap_trampoline(&c, via_asm);
	same(&c, "CFA = *(rbp - 8), rbp at (rbp)");
	cfi_get_counts(&after);
	CHECK(after.fallbacks == before.fallbacks, "a CFA expression fell back to frame pointers");

	/* code without unwind information: its frame pointer carries the walk on to main's
	   callers (libgcc stops there, so compare with a capture taken in main) */
	uintptr_t in_main[MAXF];
	int nmain = backtrace((void **)in_main, MAXF);
	cfi_get_counts(&before);
	memset(&c, 0, sizeof c);
	nocfi_trampoline(&c, via_asm);
	cfi_get_counts(&after);
	/* take <- via_asm <- nocfi_trampoline <- main <- main's callers (the last 3 of in_main) */
	uintptr_t tramp = (uintptr_t)nocfi_trampoline;
	int ok = nmain > 3 && c.ncfi >= 7 && c.cfi[2] > tramp && c.cfi[2] < tramp + 16 &&
	         c.cfi[3] > (uintptr_t)main && c.cfi[3] < (uintptr_t)main + 4096;
	for (int i = 1; ok && i <= 3; i++)
		ok = c.cfi[c.ncfi - i] == in_main[nmain - i];
	CHECK(ok, "through asm without CFI: %u frames, cfi[2] %#lx (trampoline at %#lx)", c.ncfi,
	      (unsigned long)c.cfi[2], (unsigned long)tramp);
	if (!ok)
		for (uint32_t i = 0; i < c.ncfi; i++)
			fprintf(stderr, "  %2u cfi %#lx\n", i, (unsigned long)c.cfi[i]);
	CHECK(after.fallbacks == before.fallbacks + 1, "the frame-pointer step was not counted");

	/* forgetting the rules makes the next capture parse them again, with the same result */
	cfi_forget_all();
	cfi_get_counts(&before);
	memset(&c, 0, sizeof c);
	mid_fp(&c, 2);
	same(&c, "after cfi_forget_all");
	cfi_get_counts(&after);
	CHECK(after.parses > before.parses, "rules parsed again after cfi_forget_all");

	/* a depth limit is not a failure */
	uintptr_t two[2];
	CHECK(cfi_backtrace(two, 2, NULL, (uintptr_t)__builtin_frame_address(0), stack_hi) == 2, "max 2");
	return check_finish("lib_cfi");
}
