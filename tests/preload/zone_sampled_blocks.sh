#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# zone_sampled_blocks.sh - the sampled-object zone (lib/sampzone.c) under real programs. At the
# default rate: zone_leak's 64 x 1 MiB leak is served from the zone (the stats' zone object:
# enabled, blocks live, bytes mapped) while the filter stays off (filter_needed false: free
# never read it), and `heaptap top` shows leak_site's 64 MiB within 20 % (the sampling error
# of 64 blocks of 1 MiB at 512 KiB is ~5 %); zone_stress (4 threads of malloc, calloc, realloc,
# memalign family, 1 B - 8 MiB, content checks, heaptap_reset with zone blocks live, a fork)
# ends with no zone block live and none leaked. With prof_zone:false, and at lg_prof_sample:0,
# the zone serves nothing and the filter is on, as before the zone.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
[ "$PROFILER" = heaptap ] || ht_skip "heaptap-only behaviour"
ht_need_prog zone_leak
LEAK=$BIN
ht_need_prog zone_stress
STRESS=$BIN
CLI=${HEAPTAP:-$HEAPTAP_BUILD/heaptap}
rc=0
# field FILE KEY: KEY's value in the stats' "zone" object
field() { grep -o '"zone":{[^}]*}' "$1" | grep -o "\"$2\":[a-z0-9]*" | cut -d: -f2; }
expect() { # expect WHAT GOT WANT
	if [ "$2" = "$3" ]; then echo "ok: $1 = $2"; else echo "FAIL: $1 = $2, expected $3"; rc=1; fi
}

d=$TMP/default
ht_run "$d" "" "$LEAK" 64 "$d/stats.json" || ht_fail "zone_leak exited with $?"
grep -o '"zone":{[^}]*}' "$d/stats.json"
expect "zone enabled" "$(field "$d/stats.json" enabled)" true
expect "filter_needed" "$(field "$d/stats.json" filter_needed)" false
live=$(field "$d/stats.json" blocks_live)
mapped=$(field "$d/stats.json" mapped_bytes)
[ "${live:-0}" -ge 40 ] && [ "$live" -le 64 ] || { echo "FAIL: $live zone blocks live (the sampled part of 64 leaked)"; rc=1; }
[ "${mapped:-0}" -ge $((live * 1048576)) ] || { echo "FAIL: $mapped bytes mapped for $live blocks of 1 MiB"; rc=1; }
dump=$(ht_final "$d") || exit 1
"$CLI" top --show_bytes "$LEAK" "$dump" >"$d/top.txt" 2>"$d/top.err" || { cat "$d/top.err"; ht_fail "heaptap top failed"; }
head -5 "$d/top.txt"
bytes=$(awk '/leak_site/ {print $1; exit}' "$d/top.txt")
echo "leak_site: $bytes bytes (truth 67108864)"
# N of the 64 blocks sampled (binomial, p = 1 - e^-2), each shown as 1/p MiB: below -20 % at
# N <= 44 (2e-4 a run), below -35 % at N <= 37 (~1e-9); at most +15.6 % (N = 64)
[ -n "$bytes" ] && [ "$bytes" -ge 43620762 ] && [ "$bytes" -le 80530637 ] ||
	{ echo "FAIL: leak_site shows $bytes bytes, not 64 MiB within -35/+20 %"; rc=1; }

d=$TMP/stress
ht_run "$d" prof_final:false "$STRESS" 3000 >"$d.out" || { tail -3 "$d.out"; ht_fail "zone_stress exited with $?"; }
grep -q '^zone_stress: ok$' "$d.out" || ht_fail "zone_stress did not finish"
grep -o '"zone":{[^}]*}' "$d.out"
expect "stress: zone blocks live at the end" "$(field "$d.out" blocks_live)" 0
expect "stress: releases leaked" "$(field "$d.out" leaked)" 0
m=$(field "$d.out" mapped_bytes)
[ "${m:-0}" -gt 0 ] || { echo "FAIL: zone_stress never used the zone"; rc=1; }

for conf in prof_zone:false lg_prof_sample:0; do
	d=$TMP/${conf%%:*}
	ht_run "$d" "$conf,prof_final:false" "$LEAK" 64 "$d/stats.json" || ht_fail "zone_leak ($conf) exited with $?"
	expect "$conf: zone mapped bytes" "$(field "$d/stats.json" mapped_bytes)" 0
	expect "$conf: filter_needed" "$(field "$d/stats.json" filter_needed)" true
done
exit $rc
