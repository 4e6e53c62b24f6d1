#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# smoke.sh - the collector's quickest end-to-end check: LD_PRELOAD libheaptap.so into a tiny
# program built here, and check that exactly one final dump appears under the documented name
# (<prefix>.<pid>.0.f.heap), that it is heap_v2 with our metadata, and that stock jeprof
# parses it and attributes the leaked bytes to the leaking function (exact at lg_prof_sample:0).
set -u
command -v jeprof >/dev/null || { echo "jeprof not installed"; exit 77; }
command -v cc >/dev/null || { echo "no C compiler"; exit 77; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cat >"$d/tiny.c" <<'C'
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((noinline)) void *leaky(size_t n) { return malloc(n); }
int main(void)
{
	for (int i = 0; i < 1000; i++)
		if (!leaky(1000)) return 2;
	for (int i = 0; i < 1000; i++)
		free(malloc(50));
	printf("%d\n", (int)getpid());
	return 0;
}
C
cc -O1 -g -fno-omit-frame-pointer -fno-inline -o "$d/tiny" "$d/tiny.c" || exit 1
cd "$d"
pid=$(HEAPTAP_CONF=lg_prof_sample:0 LD_PRELOAD="$HEAPTAP_LIB" ./tiny) || { echo "tiny failed"; exit 1; }
ls -la
f="heaptap.$pid.0.f.heap"
[ -f "$f" ] || { echo "no final dump named $f"; exit 1; }
[ "$(ls | grep -c '\.heap$')" = 1 ] || { echo "expected exactly one dump"; exit 1; }
head -1 "$f" | grep -qx 'heap_v2/1' || { echo "bad header: $(head -1 "$f")"; exit 1; }
grep -q '^# heaptap: trigger=final$' "$f" || { echo "no trigger metadata"; exit 1; }
grep -q "^# heaptap: pid=$pid\$" "$f" || { echo "no pid metadata"; exit 1; }
grep -q "^# heaptap: exe=$d/tiny\$" "$f" || { echo "no exe metadata"; exit 1; }
grep -q "^# heaptap: mapping start=0x[0-9a-f]* limit=0x[0-9a-f]* offset=0x[0-9a-f]* build_id=[0-9a-f]* unloaded=0 path=$d/tiny\$" "$f" ||
	{ echo "no mapping line with build id for the program"; exit 1; }
ls *.tmp.* 2>/dev/null && { echo "temporary file left behind"; exit 1; }
out=$(jeprof --text --show_bytes "$d/tiny" "$f" 2>&1) || { echo "$out"; echo "jeprof failed"; exit 1; }
echo "$out"
# 1000 x 1000 bytes leaked from leaky(); with R = 1 the numbers are exact
echo "$out" | grep -Eq '^ *1000000 +[0-9.]+% +[0-9.]+% +1000000 +[0-9.]+% leaky$' ||
	{ echo "jeprof does not show exactly 1000000 bytes in leaky"; exit 1; }
echo "ok"
