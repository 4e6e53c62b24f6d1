#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# unwind_own_stack.sh - stacks are captured on a stack of unknown extent: a thread switches
# (makecontext/swapcontext) to a stack that is a static array of the program, far from the
# thread's own stack and from the thread descriptor, and allocates there first. The collector
# bounds such a stack by the mapped pages above the frame (mincore), where libunwind used to
# validate every address through a pipe: with every allocation sampled, the DWARF and the
# frame-pointer walks must both give the coroutine's functions their bytes (jeprof-style
# `heaptap top --cum`), and the program must not crash, also when a frame without unwind
# information has rbp pointing into a hole between that stack and the thread's own.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
command -v cc >/dev/null || ht_skip "no C compiler (cc)"
d=$TMP
cat >"$d/coro.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

static char coro_stack[1 << 18] __attribute__((aligned(64)));
static ucontext_t back, coro;
void *keep[1000]; /* global: the compiler may not drop the mallocs */

__attribute__((noinline)) static void coro_leaf(int i) { keep[i] = malloc(1000); }
__attribute__((noinline)) static void coro_body(void)
{
	for (int i = 0; i < 1000; i++)
		coro_leaf(i);
}

static void *thread_main(void *arg)
{
	(void)arg;
	getcontext(&coro);
	coro.uc_stack.ss_sp = coro_stack;
	coro.uc_stack.ss_size = sizeof coro_stack;
	coro.uc_link = &back;
	makecontext(&coro, coro_body, 0);
	swapcontext(&back, &coro);
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 2;
	printf("stack %p, last block %p\n", (void *)coro_stack, keep[999]);
	return 0;
}
C
cc -O1 -g -fno-omit-frame-pointer -pthread -o "$d/coro" "$d/coro.c" || ht_fail "cannot build"
fail=0
for unw in dwarf fp; do
	r=$d/$unw
	mkdir -p "$r"
	(cd "$r" && HEAPTAP_CONF="prof_prefix:$r/ht,lg_prof_sample:0,prof_unwind:$unw" LD_PRELOAD="$HEAPTAP_LIB" "$d/coro") ||
		{ echo "FAIL ($unw): the program failed"; fail=1; continue; }
	f=$(ls "$r"/ht.*.f.heap 2>/dev/null | head -1)
	[ -n "$f" ] || { echo "FAIL ($unw): no final dump"; fail=1; continue; }
	t=$("$HEAPTAP" top --cum --show_bytes "$d/coro" "$f" 2>&1)
	echo "== prof_unwind:$unw"
	echo "$t" | grep -E 'coro_(leaf|body)$'
	for fn in coro_leaf coro_body; do
		echo "$t" | grep -Eq "^ *[0-9]+ +[0-9.]+% +[0-9.]+% +1000000 +[0-9.]+% $fn\$" ||
			{ echo "FAIL ($unw): $fn does not hold the 1000 x 1000 bytes"; echo "$t" | head; fail=1; }
	done
done

# A frame without unwind information whose rbp points into a hole between the coroutine's
# stack and the thread's: the walk's bound (the thread descriptor) spans the hole, so the frame
# pointer must be checked before it is read (mincore), not followed into a SIGSEGV.
cat >"$d/hole.c" <<'C'
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

/* no unwind information; rbp = hole while it calls malloc(n) */
__asm__(".text\n.globl bad_rbp_alloc\n.type bad_rbp_alloc, @function\nbad_rbp_alloc:\n"
        "\tpush %rbp\n\tmov %rsi, %rbp\n\tcall *malloc@GOTPCREL(%rip)\n\tpop %rbp\n\tret\n"
        ".size bad_rbp_alloc, .-bad_rbp_alloc\n");
void *bad_rbp_alloc(size_t n, void *rbp);

static ucontext_t back, coro;
static char *hole;
void *keep[100];
static int order_ok;

static void coro_body(void)
{
	for (int i = 0; i < 100; i++)
		keep[i] = bad_rbp_alloc(5000, hole + 256);
}

static void *thread_main(void *arg)
{
	(void)arg;
	keep[0] = malloc(10); /* the first sample: the bound is this thread's own stack */
	free(keep[0]);
	/* inside this thread's own 8 MiB stack, far below what it uses: the coroutine's stack
	   4 MiB down, and a hole (a page unmapped) 3 MiB down, between it and the top */
	uintptr_t mid = (uintptr_t)&arg & ~(uintptr_t)4095;
	char *stack = (char *)(mid - (4u << 20));
	hole = (char *)(mid - (3u << 20));
	order_ok = munmap(hole, 4096) == 0;
	if (!order_ok)
		return NULL;
	getcontext(&coro);
	coro.uc_stack.ss_sp = stack;
	coro.uc_stack.ss_size = 1 << 16;
	coro.uc_link = &back;
	makecontext(&coro, coro_body, 0);
	swapcontext(&back, &coro);
	/* give the stack its page back before glibc caches it for another thread */
	mmap(hole, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 8u << 20);
	if (pthread_create(&t, &attr, thread_main, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 2;
	if (!order_ok) {
		printf("cannot unmap a page of the thread's stack\n");
		return 77;
	}
	printf("survived, %p\n", keep[99]);
	return 0;
}
C
cc -O1 -g -fno-omit-frame-pointer -pthread -o "$d/hole" "$d/hole.c" || ht_fail "cannot build hole.c"
r=$d/hole.run
mkdir -p "$r"
(cd "$r" && HEAPTAP_CONF="prof_prefix:$r/ht,lg_prof_sample:0" LD_PRELOAD="$HEAPTAP_LIB" "$d/hole")
rc=$?
echo "hole: exit $rc"
if [ $rc -eq 77 ]; then
	echo "(the hole case is not set up on this machine's address layout)"
elif [ $rc -ne 0 ]; then
	echo "FAIL: the host died ($rc) when a frame pointer pointed into unmapped memory"; fail=1
else
	f=$(ls "$r"/ht.*.f.heap 2>/dev/null | head -1)
	t=$("$HEAPTAP" top --cum --show_bytes "$d/hole" "$f" 2>&1)
	echo "$t" | grep -E 'bad_rbp_alloc$'
	echo "$t" | grep -Eq "^ *[0-9]+ +[0-9.]+% +[0-9.]+% +500000 +[0-9.]+% bad_rbp_alloc\$" ||
		{ echo "FAIL: bad_rbp_alloc does not hold its 100 x 5000 bytes"; echo "$t" | head; fail=1; }
fi
[ $fail -eq 0 ] && echo ok
exit $fail
