#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/e2e/readers_vs_jeprof.sh - live check of the profile readers against the real jeprof:
# fresh dumps from jemalloc's profiler (interval dumps with prof_accum) and from gperftools'
# HEAPPROFILE; for each, `jeprof --text --show_bytes` and `heaptap top --show_bytes` must
# print the same "Total:" for every value selector, and for --base (jeprof subtracts after
# scaling each profile). The recorded-golden version of this check is tests/unit/profile_golden.c.
. "$(dirname "$0")/lib/test.sh"
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
TCMALLOC=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4
command -v jeprof >/dev/null || { echo "jeprof not installed"; exit 77; }
[ -e "$JEMALLOC" ] || { echo "libjemalloc.so.2 not installed"; exit 77; }
[ -e "$TCMALLOC" ] || { echo "libtcmalloc.so.4 not installed"; exit 77; }

cat >"$TMP/alloc.c" <<'C'
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) void *small_site(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
__attribute__((noinline)) void *page_site(size_t n) { return calloc(1, n); }
__attribute__((noinline)) void *big_site(size_t n) { void *p = malloc(n); memset(p, 2, n); return p; }
static void *keep[40000];
int main(void)
{
	int k = 0;
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 6000; i++) {
			void *p = small_site(48 + (size_t)(i % 11) * 40);
			if (i % 3 == 0) keep[k++] = p; else free(p);
		}
		for (int i = 0; i < 700; i++) keep[k++] = page_site(8192);
		for (int i = 0; i < 3; i++) keep[k++] = big_site((size_t)3 << 20);
	}
	return k == 0;
}
C
gcc -O1 -g -fno-omit-frame-pointer -o "$TMP/alloc" "$TMP/alloc.c" || { echo "cannot compile"; exit 1; }
(cd "$TMP" && LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,prof_accum:true,lg_prof_sample:13,lg_prof_interval:24,prof_final:true,prof_prefix:$TMP/je ./alloc) || { echo "jemalloc run failed"; exit 1; }
(cd "$TMP" && LD_PRELOAD=$TCMALLOC HEAPPROFILE=$TMP/gp ./alloc) >/dev/null 2>&1 || { echo "tcmalloc run failed"; exit 1; }
final=$(ls "$TMP"/je.*.f.heap 2>/dev/null | head -n 1)
first=$(ls "$TMP"/je.*.i0.heap 2>/dev/null | head -n 1)
gp=$(ls "$TMP"/gp.*.heap 2>/dev/null | tail -n 1)
[ -n "$final" ] && [ -n "$first" ] && [ -n "$gp" ] || { echo "dumps missing: $(ls "$TMP")"; exit 1; }

total() { sed -n 's/^Total: \([-0-9]*\) .*/\1/p' | head -n 1; }

compare() { # label, then the arguments both tools get
	local label=$1; shift
	local want got
	want=$(jeprof --text --show_bytes "$@" 2>/dev/null | total)
	# jeprof takes the program first; heaptap finds it by itself, so drop it
	local args=() a
	for a in "$@"; do [ "$a" = "$TMP/alloc" ] || args+=("$a"); done
	got=$("$HEAPTAP" top --no-symbolize --show_bytes "${args[@]}" 2>"$TMP/err" | total)
	want=${want:-0} got=${got:-0}
	local d=$((got - want))
	if [ "${d#-}" -le 1 ] && [ -n "$want" ]; then
		echo "ok   $label: jeprof $want, heaptap $got"
	else
		echo "FAIL $label: jeprof $want, heaptap $got"; cat "$TMP/err"
		fail=1
	fi
}

for sel in inuse_space inuse_objects alloc_space alloc_objects; do
	compare "jemalloc final --$sel" "--$sel" "$TMP/alloc" "$final"
done
compare "jemalloc --base first interval dump" --inuse_space "--base=$first" "$TMP/alloc" "$final"
compare "jemalloc --base, alloc objects" --alloc_objects "--base=$first" "$TMP/alloc" "$final"
compare "gperftools HEAPPROFILE --inuse_space" --inuse_space "$TMP/alloc" "$gp"
compare "gperftools HEAPPROFILE --alloc_objects" --alloc_objects "$TMP/alloc" "$gp"
exit $fail
