#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# accuracy_jeprof_exact.sh - at lg_prof_sample:0 (every allocation recorded) the real jeprof must
# report each site of the known-truth programs within 0.5% of the bytes they keep live, and
# ~0 for the allocate-and-free sites. C sites use jeprof's flat column, C++ sites the cum
# column. truth_sites (built with frame pointers) runs with the DWARF and frame-pointer unwinders,
# truth_cxx with heaptap's CFI walk (also under its old name prof_unwind:libunwind).
# With prof_accum:true, jeprof --alloc_space must also give each site's cumulative
# allocated bytes (freed ones, realloc steps and the churn site included) within 0.5%.
set -u
. "$(dirname "$0")/lib/common.sh"
ht_init
command -v jeprof >/dev/null || ht_skip "jeprof is not installed"
rc=0
for run in truth_sites:dwarf truth_cxx:dwarf truth_cxx:libunwind truth_sites:fp; do
	prog=${run%%:*} unwind=${run##*:}
	ht_need_prog $prog; bin=$BIN
	d=$TMP/$prog.$unwind
	args=(exact "$d/truth.txt"); [ $prog = truth_cxx ] && args=("$d/truth.txt")
	ht_run "$d" lg_prof_sample:0,prof_unwind:$unwind "$bin" "${args[@]}" || ht_fail "$prog exited with $?"
	dump=$(ht_final "$d") || exit 1
	ht_jeprof "$bin" "$dump" "$d/report" || ht_fail "jeprof failed on $dump"
	echo "== $prog, prof_unwind:$unwind ($PROFILER, $(head -n 1 "$dump"))"
	$ACC_PY exact --kind jeprof --mode "$(ht_mode)" "$d/truth.txt" "$d/report" || rc=1
done

ht_need_prog truth_sites
d=$TMP/accum
ht_run "$d" lg_prof_sample:0,prof_accum:true "$BIN" exact "$d/truth.txt" || ht_fail "truth_sites exited with $?"
dump=$(ht_final "$d") || exit 1
jeprof --text --show_bytes --alloc_space "$BIN" "$dump" >"$d/report" 2>"$d/report.err" ||
	ht_fail "jeprof --alloc_space failed: $(cat "$d/report.err")"
echo "== truth_sites, prof_accum:true, jeprof --alloc_space (cumulative bytes)"
$ACC_PY exact --kind jeprof --mode "$(ht_mode)" --value alloc "$d/truth.txt" "$d/report" || rc=1
exit $rc
