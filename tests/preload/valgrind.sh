#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# valgrind.sh - runs the collector's own code under memcheck: a small threaded program (built
# here) with libheaptap.so preloaded, both unwinders (dwarf, fp), every allocation sampled, and
# fails on any memcheck error in heaptap (nothing is suppressed: without libunwind there are no
# address-validation probes) or if the final dump is not exact. valgrind's own
# malloc interception is limited to libc (somalloc=nouserintercepts) so our interposers run.
set -u
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 77; }
command -v jeprof >/dev/null || { echo "jeprof not installed"; exit 77; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cat >"$d/prog.c" <<'C'
#include <pthread.h>
#include <stdlib.h>
__attribute__((noinline)) void *leak(size_t n) { return malloc(n); }
static void *th(void *a)
{
	for (int i = 0; i < 200; i++)
		free(leak(100 + i));
	leak(5000);
	return a;
}
int main(void)
{
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], 0, th, 0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], 0);
	for (int i = 0; i < 100; i++)
		leak(1000);
	void *p = calloc(1, 10);
	p = realloc(p, 100000);
	free(p);
	return 0;
}
C
cc -g -O1 -fno-omit-frame-pointer -pthread -o "$d/prog" "$d/prog.c" || exit 1
fail=0
for unw in dwarf fp; do
	mkdir "$d/$unw"
	(cd "$d/$unw" && timeout 300 valgrind -q --trace-children=yes --error-exitcode=9 \
		--soname-synonyms=somalloc=nouserintercepts \
		env HEAPTAP_CONF=lg_prof_sample:0,prof_unwind:$unw LD_PRELOAD="$HEAPTAP_LIB" "$d/prog") \
		>"$d/$unw.log" 2>&1
	rc=$?
	cat "$d/$unw.log"
	[ $rc -eq 0 ] || { echo "FAIL: valgrind exit $rc with prof_unwind:$unw"; fail=1; continue; }
	f=$(ls "$d/$unw"/*.f.heap 2>/dev/null | head -1)
	[ -n "$f" ] || { echo "FAIL: no final dump with prof_unwind:$unw"; fail=1; continue; }
	out=$(jeprof --text --show_bytes "$d/prog" "$f" 2>/dev/null)
	echo "$out" | head -5
	# 3 x 5000 + 100 x 1000 bytes are still allocated by leak()
	echo "$out" | grep -Eq '^ *115000 .* leak$' || { echo "FAIL: leak() does not hold exactly 115000 bytes ($unw)"; fail=1; }
done
[ $fail -eq 0 ] && echo ok
exit $fail
