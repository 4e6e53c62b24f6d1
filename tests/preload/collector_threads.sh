#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# collector_threads.sh - 8 threads allocating and freeing (and realloc'ing) each other's objects
# under the collector: the program finishes, and at lg_prof_sample:0 jeprof shows each thread's
# own site with exactly the bytes it keeps and ~0 for the cross-thread churn; at the default
# rate the run finishes too and its dump parses (the sampled path with cross-thread frees).
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
command -v jeprof >/dev/null || ht_skip "jeprof is not installed"
ht_need_prog coll_xthreads
d=$TMP/exact
ht_run "$d" lg_prof_sample:0 "$BIN" "$d/truth.txt" || ht_fail "coll_xthreads exited with $?"
dump=$(ht_final "$d") || exit 1
ht_jeprof "$BIN" "$dump" "$d/report" || ht_fail "jeprof cannot read $dump"
echo "== every allocation recorded"
$ACC_PY exact --kind jeprof --mode "$(ht_mode)" "$d/truth.txt" "$d/report" || exit 1
d=$TMP/sampled
ht_run "$d" lg_prof_sample:12 "$BIN" "$d/truth.txt" || ht_fail "coll_xthreads (sampled) exited with $?"
dump=$(ht_final "$d") || exit 1
ht_jeprof "$BIN" "$dump" "$d/report" || ht_fail "jeprof cannot read $dump"
grep -q worker_site_7 "$d/report" || ht_fail "the sampled dump lacks worker_site_7 (4 MiB live)"
echo "== lg_prof_sample:12: $(head -n 2 "$d/report" | tail -n 1)"
