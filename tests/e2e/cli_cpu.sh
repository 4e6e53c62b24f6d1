#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_cpu.sh - the CLI reads CPU profiles: heaptap's pprof CPU profile and gperftools' binary
# format written from the same kind of run (build/progs/cpu_split, 3:1 split of work_a and
# work_b) give `heaptap top` in seconds ("Total: N s") with work_a's cumulative time about
# three times work_b's, and `heaptap collapsed` stacks ending in work_a;spin / work_b;spin
# whose values (CPU nanoseconds) keep the split. `heaptap run --cpu` writes the run's CPU profile
# beside the heap dump and names it, with its CPU time, in the files list.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/cpu.sh"
ht_init
ht_need_prog cpu_split
d=$TMP/run
mkdir -p "$d"
for f in pb prof; do
	(cd "$d" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=cpu_hz:1000,prof:false "$BIN" api 60000000 "$d/s.$f") \
		>"$d/out.$f" 2>&1 || { cat "$d/out.$f"; ht_fail "cpu_split exited with $?"; }
	$HEAPTAP top "$BIN" "$d/s.$f" >"$d/top.$f" 2>"$d/top.$f.err" || { cat "$d/top.$f.err"; ht_fail "heaptap top cannot read s.$f"; }
	grep -Eq '^Total: [0-9]+\.[0-9]{2} s$' "$d/top.$f" || { head -3 "$d/top.$f"; ht_fail "top of s.$f is not in seconds"; }
	awk '$6 ~ /^work_/ { print $6, $4 }' "$d/top.$f" >"$d/top.$f.txt"
	cpu_share "$d/top.$f.txt" work_a "work_a work_b" 0.65 0.85 || ht_fail "top of s.$f: split is off"
	$HEAPTAP collapsed "$BIN" "$d/s.$f" >"$d/col.$f" 2>&1 || ht_fail "heaptap collapsed cannot read s.$f"
	awk '{ n = split($1, f, ";"); if (n >= 2) s[f[n-1]] += $2 } END { for (k in s) print k, s[k] }' \
		"$d/col.$f" >"$d/col.$f.txt"
	cpu_share "$d/col.$f.txt" work_a "work_a work_b" 0.65 0.85 || ht_fail "collapsed of s.$f: split is off"
done
$HEAPTAP_PLAIN run --cpu --out "$d/ro" -- "$BIN" env 60000000 >"$d/run.out" 2>&1 || { cat "$d/run.out"; ht_fail "heaptap run --cpu failed"; }
line=$(grep 'CPU profile (go tool pprof):' "$d/run.out") || { cat "$d/run.out"; ht_fail "run --cpu names no CPU profile"; }
f=$(echo "$line" | awk '{ print $6 }')
[ -s "$f" ] || ht_fail "run --cpu: $f is missing"
echo "$line" | grep -Eq '\([0-9]+\.[0-9]{2} s of CPU time\)' || ht_fail "run --cpu: no CPU time in '$line'"
$HEAPTAP top "$BIN" "$f" | awk '$6 ~ /^work_/ { print $6, $4 }' >"$d/run.txt"
cpu_share "$d/run.txt" work_a "work_a work_b" 0.55 0.92 || ht_fail "run --cpu: split is off"
echo ok
