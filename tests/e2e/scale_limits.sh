#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# scale_limits.sh - what the tables cannot hold is said, never hidden: (1) a stack deeper than
# prof_bt_max ends in a heaptap_truncated_stack frame that jeprof and heaptap show, and
# heaptap top prints one warning line with the count; (2) a live-table budget set small
# (prof_max_live) drops samples, the dump counts them, and top, collapsed and the
# flame graph's subtitle say how many and what share of the bytes, from the heap_v2 dump and
# from its pprof twin.
set -u
. "$(dirname "$0")/lib/common.sh"
ht_init
[ "$PROFILER" = heaptap ] || ht_skip "heaptap-only behaviour"
command -v jeprof >/dev/null || ht_skip "jeprof is not installed"
ht_need_prog scale_sites
HT=$HEAPTAP_BUILD/heaptap

# (1) deep: 300 frames of recursion, prof_bt_max 64
d=$TMP/deep
ht_run "$d" prof_bt_max:64,lg_prof_sample:0 "$BIN" deep "$d/truth.txt" 300 || ht_fail "deep run failed"
dump=$(ht_final "$d") || exit 1
grep '^# heaptap: truncated_' "$dump"
t=$(sed -n 's/^# heaptap: truncated_samples=//p' "$dump")
[ "${t:-0}" -ge 256 ] || ht_fail "truncated_samples=${t:-none}, expected >= 256"
jeprof --text --show_bytes --cum "$BIN" "$dump" >"$d/jeprof" 2>/dev/null || ht_fail "jeprof failed"
grep -q 'heaptap_truncated_stack' "$d/jeprof" || { cat "$d/jeprof"; ht_fail "jeprof shows no heaptap_truncated_stack frame"; }
"$HT" top --cum "$BIN" "$dump" >"$d/top" 2>"$d/top.err" || ht_fail "heaptap top failed"
cat "$d/top.err"; head -n 5 "$d/top"
grep -q 'heaptap_truncated_stack' "$d/top" || ht_fail "heaptap top shows no heaptap_truncated_stack frame"
[ "$(grep -c '^heaptap: warning: .*stacks cut at prof_bt_max' "$d/top.err")" = 1 ] ||
	ht_fail "heaptap top did not print one warning line about cut stacks"

# (2) budget: 1000 live samples at most, 50,000 kept
d=$TMP/budget
ht_run "$d" prof_max_live:1000,lg_prof_sample:0,prof_format:heap_v2+pprof "$BIN" live "$d/truth.txt" 0.01 \
	2>"$d.err" || ht_fail "budget run failed"
cat "$d.err"
grep -q 'prof_max_live' "$d.err" || ht_fail "the collector did not say the budget was reached"
dump=$(ht_final "$d") || exit 1
grep '^# heaptap: dropped_' "$dump"
n=$(sed -n 's/^# heaptap: dropped_samples=//p' "$dump")
[ "${n:-0}" -ge 40000 ] || ht_fail "dropped_samples=${n:-none}, expected >= 40000"
for cmd in top collapsed; do
	"$HT" $cmd "$BIN" "$dump" >"$d/$cmd" 2>"$d/$cmd.err" || ht_fail "heaptap $cmd failed"
	cat "$d/$cmd.err"
	[ "$(grep -c "^heaptap: warning: $n of [0-9]* samples dropped by the collector (~.* up to [0-9.]*% of the bytes" "$d/$cmd.err")" = 1 ] ||
		ht_fail "heaptap $cmd did not print one warning line with the count"
done
"$HT" top "$BIN" "${dump%.heap}.pb.gz" >/dev/null 2>"$d/pb.err" || ht_fail "heaptap top on the pprof twin failed"
grep -q "^heaptap: warning: $n of" "$d/pb.err" || ht_fail "the pprof twin does not carry the drop count"
"$HT" flame "$BIN" "$dump" -o "$d/f.svg" 2>/dev/null || ht_fail "heaptap flame failed"
grep -q "$n of [0-9]* samples dropped" "$d/f.svg" || ht_fail "the flame graph's subtitle does not say what was dropped"
echo "ok"
