#!/bin/bash
# accuracy_jeprof_exact.sh - at lg_prof_sample:0 (every allocation recorded) the real jeprof must
# report each site of the known-truth programs within 0.5% of the bytes they keep live, and
# ~0 for the allocate-and-free site. C sites use jeprof's flat column, C++ sites the cum column.
set -u
. "$(dirname "$0")/lib/common.sh"
ht_init
command -v jeprof >/dev/null || ht_skip "jeprof is not installed"
rc=0
for prog in truth_sites truth_cxx; do
	ht_need_prog $prog; bin=$BIN
	d=$TMP/$prog
	args=(exact "$d/truth.txt"); [ $prog = truth_cxx ] && args=("$d/truth.txt")
	ht_run "$d" lg_prof_sample:0 "$bin" "${args[@]}" || ht_fail "$prog exited with $?"
	dump=$(ht_final "$d") || exit 1
	ht_jeprof "$bin" "$dump" "$d/report" || ht_fail "jeprof failed on $dump"
	echo "== $prog ($PROFILER, $(head -n 1 "$dump"))"
	$ACC_PY exact --kind jeprof --mode "$(ht_mode)" "$d/truth.txt" "$d/report" || rc=1
done
exit $rc
