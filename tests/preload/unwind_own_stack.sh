#!/bin/bash
# unwind_own_stack.sh - stacks are captured on a stack of unknown extent: a thread switches
# (makecontext/swapcontext) to a stack that is a static array of the program, far from the
# thread's own stack and from the thread descriptor, and allocates there first. The collector
# bounds such a stack by the mapped pages above the frame (mincore), where libunwind used to
# validate every address through a pipe: with every allocation sampled, the DWARF and the
# frame-pointer walks must both give the coroutine's functions their bytes (jeprof-style
# `heaptap top --cum`), and the program must not crash.
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
[ $fail -eq 0 ] && echo ok
exit $fail
