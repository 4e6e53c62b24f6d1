#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# collector_triggers.sh - every dump trigger writes correctly named, complete dumps:
# interval (lg_prof_interval, 'i'), high-water (prof_gdump, 'u'), time (prof_time_interval,
# 't'), signal (prof_signal, 's'), manual through the C API ('m', explicit .heap and .pb.gz
# paths), final ('f', every run), prof_max_dumps retention, and the prof_leak summary line.
# Names must be <prefix>.<pid>.<seq>.<c><n>.heap with one global seq counter.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
ht_need_prog coll_triggers
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# check_dumps DIR: every dump is complete, well named, with distinct seq numbers.
check_dumps() {
	local f base seqs n
	for f in "$1"/ht.*.heap; do
		[ -e "$f" ] || continue
		base=$(basename "$f")
		[[ $base =~ ^ht\.[0-9]+\.[0-9]+\.([iumts][0-9]+|f)\.heap$ ]] || bad "badly named dump $base"
		head -n 1 "$f" | grep -q '^heap_v2/[0-9]*$' || bad "$base does not start with heap_v2/R"
		grep -q '^MAPPED_LIBRARIES:' "$f" || bad "$base has no memory map (torn?)"
	done
	seqs=$(ls "$1" | sed -n 's/^ht\.[0-9]*\.\([0-9]*\)\..*\.heap$/\1/p' | sort -n)
	n=$(echo "$seqs" | grep -c .)
	[ "$(echo "$seqs" | uniq | grep -c .)" = "$n" ] || bad "seq numbers repeat in $1: $(echo $seqs)"
	[ -n "$(ls "$1"/ht.*.f.heap 2>/dev/null)" ] || bad "no final dump in $1"
}
count() { ls "$1" 2>/dev/null | grep -cE "^ht\.[0-9]+\.[0-9]+\.$2[0-9]+\.heap$"; }

echo "== interval: lg_prof_interval:20 (1 MiB), 64 MiB allocated and freed"
d=$TMP/interval
ht_run "$d" lg_prof_interval:20 "$BIN" churn 64 || bad "churn run exited with $?"
n=$(count "$d" i); echo "interval dumps: $n"
# one per MiB crossed (the last crossing may still sit in the thread's unfolded count at exit):
# the thread's dumps still in hand at exit are written before the final one, never cut off
# (before, exit cancelled those: 0-63 of them were missing at random)
[ "$n" -ge 63 ] || bad "expected >= 63 interval dumps, got $n"
check_dumps "$d"

echo "== high-water: prof_gdump, heap grown in 12 steps of 1 MiB, every allocation recorded"
d=$TMP/gdump
if [ "$PROFILER" = jemalloc ]; then conf=prof_gdump:true; else conf=prof_gdump:true,prof_gdump_rate_ms:0; fi
ht_run "$d" "$conf,lg_prof_sample:0" "$BIN" grow 12 || bad "grow run exited with $?"
n=$(count "$d" u); echo "high-water dumps: $n"
[ "$n" -ge 2 ] || bad "expected >= 2 high-water dumps, got $n"
check_dumps "$d"
# Each high-water dump holds no fewer live bytes than the one before (exact at lg_prof_sample:0).
totals=$(for f in $(ls "$d" | grep -E '\.u[0-9]+\.heap$' | sort -t. -k4.2 -n); do
	sed -n '2s/^ *t\*: [0-9]*: \([0-9]*\) .*/\1/p' "$d/$f"; done)
echo "live bytes in successive high-water dumps: $(echo $totals)"
echo "$totals" | awk 'NR > 1 && $1 < prev {bad = 1} {prev = $1} END {exit bad}' ||
	bad "high-water dumps shrink: $(echo $totals)"
last=$(echo "$totals" | tail -n 1)
[ "${last:-0}" -ge $((10 << 20)) ] || bad "the last high-water dump holds ${last:-0} bytes, expected >= 10 MiB of the 12"

echo "== manual: the C API"
d=$TMP/manual
mkdir -p "$d"
ht_run "$d" "" "$BIN" manual "$d" >"$d/out" || bad "manual run exited with $?"
cat "$d/out" | cut -c1-300
grep -q '^heaptap_dump(NULL) = 0$' "$d/out" || bad "heaptap_dump(NULL) failed"
grep -q '^heaptap_dump(explicit.heap) = 0$' "$d/out" || bad "heaptap_dump(path) failed"
n=$(count "$d" m); echo "manual dumps: $n"
[ "$n" = 1 ] || bad "expected 1 manual dump (m0), got $n"
ls "$d"/ht.*.m0.heap >/dev/null 2>&1 || bad "the manual dump is not named ...m0.heap"
head -n 1 "$d/explicit.heap" 2>/dev/null | grep -q '^heap_v2/' || bad "explicit.heap is not a heap_v2 dump"
if [ "$PROFILER" = heaptap ]; then
	grep -q '^heaptap_dump(explicit.pb.gz) = 0$' "$d/out" || bad "heaptap_dump(.pb.gz) failed"
	[ "$(head -c 2 "$d/explicit.pb.gz" 2>/dev/null | od -An -tx1 | tr -d ' ')" = 1f8b ] ||
		bad "explicit.pb.gz is not gzip"
	grep -q '^stats [0-9]* {' "$d/out" || bad "heaptap_stats_json gave no JSON object"
fi
check_dumps "$d"

if [ "$PROFILER" = heaptap ]; then
	echo "== time: prof_time_interval:100ms over 1 s"
	d=$TMP/time
	ht_run "$d" prof_time_interval:100ms "$BIN" sleep 1000 || bad "sleep run exited with $?"
	n=$(count "$d" t); echo "timed dumps: $n"
	[ "$n" -ge 3 ] || bad "expected >= 3 timed dumps in 1 s at 100 ms, got $n"
	check_dumps "$d"

	echo "== signal: prof_signal:USR2, the program raises SIGUSR2"
	d=$TMP/signal
	ht_run "$d" prof_signal:USR2 "$BIN" signal >"$d.out" || bad "signal run exited with $? (killed by SIGUSR2?)"
	cat "$d.out"
	n=$(count "$d" s); echo "signal dumps: $n"
	[ "$n" = 1 ] || bad "expected exactly 1 signal dump, got $n"
	check_dumps "$d"

	echo "== prof_max_dumps:3 with prof_time_interval:50ms over 1.2 s"
	d=$TMP/maxdumps
	ht_run "$d" prof_time_interval:50ms,prof_max_dumps:3 "$BIN" sleep 1200 || bad "run exited with $?"
	ls "$d"
	n=$(count "$d" t)
	hi=$(ls "$d" | sed -n 's/^ht\.[0-9]*\.[0-9]*\.t\([0-9]*\)\.heap$/\1/p' | sort -n | tail -n 1)
	echo "timed dumps kept: $n, newest t${hi:-none}"
	[ "$n" -ge 1 ] && [ "$n" -le 3 ] || bad "expected 1..3 timed dumps kept, got $n"
	[ "${hi:-0}" -ge 5 ] || bad "expected the newest kept timed dump to be t5 or later (older ones deleted), got t${hi:-none}"

	echo "== prof_leak: the leak summary line"
	d=$TMP/leak
	ht_run "$d" prof_leak:true,lg_prof_sample:0 "$BIN" grow 3 2>"$d.err" || bad "leak run exited with $?"
	cat "$d.err"
	line=$(grep '^heaptap: leak summary: ' "$d.err")
	[ -n "$line" ] || bad "no 'heaptap: leak summary:' line on stderr"
	bytes=$(echo "$line" | sed -n 's/.*: ~\([0-9]*\) bytes.*/\1/p')
	echo "leak summary bytes: ${bytes:-?} (3 MiB kept by grow_site, plus libc's own)"
	[ -n "$bytes" ] && [ "$bytes" -ge 3145728 ] && [ "$bytes" -le $((3145728 + 262144)) ] ||
		bad "leak summary bytes ${bytes:-?} not in [3 MiB, 3.25 MiB]"
	echo "$line" | grep -qE '~[0-9]+ objects?, >= [0-9]+ contexts?' || bad "leak summary line malformed: $line"
fi

[ $fails = 0 ] || { echo "$fails failures"; exit 1; }
echo "all triggers ok"
