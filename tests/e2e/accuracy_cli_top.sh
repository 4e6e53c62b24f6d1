#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# accuracy_cli_top.sh - heaptap's own analyzer on the collector's dumps against the known truth:
# `heaptap top --show_bytes` (jeprof's layout) must give every site of truth_sites and
# truth_cxx within 0.5% at lg_prof_sample:0, and pass the same sampled checks as
# accuracy_jeprof_sampled.sh over K runs at the default rate (exact per-run acceptance
# intervals, bounded 3-sigma count, means within 5%). Runs the ASan build of the CLI.
set -u
. "$(dirname "$0")/lib/common.sh"
ht_init
[ "$PROFILER" = heaptap ] || ht_skip "tests heaptap's own CLI"
CLI=${HEAPTAP:-$HEAPTAP_BUILD/heaptap-asan}
[ -x "$CLI" ] || ht_skip "$CLI is not built"
cp "$CLI" "$TMP/heaptap" && CLI=$TMP/heaptap # a private copy: build/ may be rebuilt meanwhile
top() { "$CLI" top --show_bytes "$1" "$2" >"$3" 2>"$3.err" || { cat "$3.err"; return 1; }; }
rc=0
for prog in truth_sites truth_cxx; do
	ht_need_prog $prog
	d=$TMP/exact_$prog
	args=(exact "$d/truth.txt"); [ $prog = truth_cxx ] && args=("$d/truth.txt")
	ht_run "$d" lg_prof_sample:0 "$BIN" "${args[@]}" || ht_fail "$prog exited with $?"
	dump=$(ht_final "$d") || exit 1
	top "$BIN" "$dump" "$d/report" || ht_fail "heaptap top failed on $dump"
	echo "== exact: $prog"
	$ACC_PY exact --kind jeprof --mode req "$d/truth.txt" "$d/report" || rc=1
done

ht_need_prog truth_sites
K=${ACCURACY_RUNS:-24}
pairs=()
for i in $(seq 1 "$K"); do
	d=$TMP/run$i
	ht_run "$d" "" "$BIN" sampled "$d/truth.txt" || ht_fail "run $i: truth_sites exited with $?"
	dump=$(ht_final "$d") || exit 1
	top "$BIN" "$dump" "$d/report" || ht_fail "run $i: heaptap top failed on $dump"
	pairs+=("$d/truth.txt" "$d/report")
done
echo "== sampled: truth_sites x $K, heaptap top"
$ACC_PY sampled --kind jeprof --mode req --period 524288 "${pairs[@]}" || rc=1
exit $rc
