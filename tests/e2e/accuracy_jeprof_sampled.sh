#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# accuracy_jeprof_sampled.sh - at the default rate (R = 512 KiB) the real jeprof's per-site
# estimates must match the sampling math: K runs of the known-truth program, every single
# estimate inside its exact acceptance interval (tail 1e-7), no more estimates beyond 3 sigma
# than the exact distributions allow, and the mean over K runs of every site >= 8 MiB within
# 5% of the truth (K and site sizes are chosen so 5% >= 4.5 sigma of the mean; docs/DESIGN.md).
# Then a few runs at R = 1 KiB, where one run is precise enough to expose a biased stack that
# mixes sizes (site_mixed).
set -u
. "$(dirname "$0")/lib/common.sh"
ht_init
command -v jeprof >/dev/null || ht_skip "jeprof is not installed"
ht_need_prog truth_sites
K=${ACCURACY_RUNS:-24}
pairs=()
jobs_running=0
for i in $(seq 1 "$K"); do
	d=$TMP/run$i
	ht_run "$d" "" "$BIN" sampled "$d/truth.txt" || ht_fail "run $i: truth_sites exited with $?"
	dump=$(ht_final "$d") || exit 1
	[ "$i" = 1 ] && echo "first dump: $(head -n 1 "$dump")"
	grep -q '^heap_v2/524288$' "$dump" || ht_fail "run $i: $dump is not heap_v2/524288: $(head -n 1 "$dump")"
	# jeprof runs beside the next program run (two cores).
	ht_jeprof "$BIN" "$dump" "$d/report" &
	pairs+=("$d/truth.txt" "$d/report")
	while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n; done
done
wait
for ((j = 1; j < ${#pairs[@]}; j += 2)); do
	[ -s "${pairs[j]}" ] || ht_fail "jeprof wrote no report ${pairs[j]}: $(cat "${pairs[j]}.err")"
done
$ACC_PY sampled --kind jeprof --mode "$(ht_mode)" --period 524288 "${pairs[@]}" || exit 1

# At R = 1 KiB one run is precise to ~1% per site, so a bias shows in each run: site_mixed puts
# 64 B and 1 MiB objects on one stack, which jeprof gets right only from pre-compensated counts.
K2=2
pairs=()
for i in $(seq 1 "$K2"); do
	d=$TMP/fine$i
	ht_run "$d" lg_prof_sample:10 "$BIN" sampled "$d/truth.txt" || ht_fail "fine run $i exited with $?"
	dump=$(ht_final "$d") || exit 1
	ht_jeprof "$BIN" "$dump" "$d/report" || ht_fail "jeprof failed on $dump"
	pairs+=("$d/truth.txt" "$d/report")
done
echo "== lg_prof_sample:10 (R = 1 KiB), $K2 runs"
$ACC_PY sampled --kind jeprof --mode "$(ht_mode)" --period 1024 "${pairs[@]}"
