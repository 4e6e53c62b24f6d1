#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# static_link.sh - the collector linked into a program (build/libheaptap.a) instead of
# preloaded: the program's own malloc is ours, RTLD_NEXT finds libc's, the constructor starts
# the collector, and the final dump attributes exactly what the program leaked (R = 1); the C
# API is callable directly.
set -u
command -v jeprof >/dev/null || { echo "jeprof not installed"; exit 77; }
a="$HEAPTAP_BUILD/libheaptap.a"
[ -f "$a" ] || { echo "no $a"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cat >"$d/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "heaptap.h"
__attribute__((noinline)) void *keep(size_t n) { return malloc(n); }
int main(void)
{
	for (int i = 0; i < 300; i++)
		keep(777);
	printf("%s %d %d\n", heaptap_version(), heaptap_active(), heaptap_dump("mid.heap"));
	return 0;
}
C
cc -O1 -g -fno-omit-frame-pointer -I"$ROOT/include" -o "$d/prog" "$d/prog.c" "$a" -lm -ldl -pthread || exit 1
cd "$d"
out=$(HEAPTAP_CONF=lg_prof_sample:0 ./prog) || { echo "prog failed"; exit 1; }
echo "$out"
[ "$out" = "0.1.0 1 0" ] || { echo "FAIL: API answered '$out'"; exit 1; }
fail=0
for f in mid.heap $(ls *.f.heap); do
	r=$(jeprof --text --show_bytes ./prog "$f" 2>/dev/null)
	echo "$r" | head -3
	echo "$r" | grep -Eq '^ *233100 .* keep$' || { echo "FAIL: $f: keep() does not hold exactly 233100 bytes"; fail=1; }
done
[ $fail -eq 0 ] && echo ok
exit $fail
