#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# accuracy_pprof.sh - the pprof twin of every dump (prof_format:heap_v2+pprof) read by the real
# `go tool pprof -top -sample_index=inuse_space`: exact at lg_prof_sample:0 (each site within
# 0.5%, the allocate-and-free sites ~0), and at the default rate the same statistical checks as
# accuracy_jeprof_sampled.sh over K runs (pprof values are stored already unsampled).
set -u
. "$(dirname "$0")/lib/common.sh"
ht_init
command -v go >/dev/null || ht_skip "go (go tool pprof) is not installed"
rc=0
for prog in truth_sites truth_cxx; do
	ht_need_prog $prog
	d=$TMP/exact_$prog
	args=(exact "$d/truth.txt"); [ $prog = truth_cxx ] && args=("$d/truth.txt")
	ht_run "$d" lg_prof_sample:0,prof_format:heap_v2+pprof "$BIN" "${args[@]}" ||
		ht_fail "$prog exited with $?"
	dump=$(ht_final "$d") || exit 1
	in=$(ht_pprof_input "$dump") || exit 1
	ht_gopprof "$BIN" "$in" "$d/report" || ht_fail "go tool pprof failed on $in"
	echo "== exact: $prog ($PROFILER, $(basename "$in"))"
	$ACC_PY exact --kind pprof --mode "$(ht_mode)" $(ht_pprof_col) "$d/truth.txt" "$d/report" || rc=1
done

ht_need_prog truth_sites
K=${ACCURACY_RUNS:-24}
pairs=()
for i in $(seq 1 "$K"); do
	d=$TMP/run$i
	ht_run "$d" prof_format:heap_v2+pprof "$BIN" sampled "$d/truth.txt" ||
		ht_fail "run $i: truth_sites exited with $?"
	dump=$(ht_final "$d") || exit 1
	in=$(ht_pprof_input "$dump") || exit 1
	ht_gopprof "$BIN" "$in" "$d/report" || ht_fail "run $i: go tool pprof failed on $in"
	pairs+=("$d/truth.txt" "$d/report")
done
echo "== sampled: truth_sites x $K ($PROFILER)"
$ACC_PY sampled --kind pprof --mode "$(ht_mode)" $(ht_pprof_col) --period 524288 "${pairs[@]}" || rc=1
exit $rc
