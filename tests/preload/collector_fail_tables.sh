#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# collector_fail_tables.sh - the stack table and the live table full (prof_max_stacks:8,
# prof_max_live:256, every allocation sampled, 64 distinct stacks x 100 live objects): the
# host runs on and exits normally, each kind of problem is logged at most once on stderr,
# the statistics count the dropped samples, and the dumps still parse with jeprof and hold no
# more than the truth.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
[ "$PROFILER" = heaptap ] || ht_skip "heaptap-only behaviour"
command -v jeprof >/dev/null || ht_skip "jeprof is not installed"
ht_need_prog coll_triggers
d=$TMP/run
ht_run "$d" lg_prof_sample:0,prof_max_stacks:8,prof_max_live:256 "$BIN" tables >"$TMP/out" 2>"$TMP/err"
rc=$?
cut -c1-300 "$TMP/out"; cat "$TMP/err"
[ $rc = 0 ] || ht_fail "the host exited with $rc"
n=$(grep -c '^heaptap: ' "$TMP/err")
u=$(grep '^heaptap: ' "$TMP/err" | sort -u | wc -l)
[ "$n" -ge 1 ] && [ "$n" = "$u" ] && [ "$n" -le 2 ] ||
	ht_fail "expected one stderr line per full table (1 or 2, none repeated), got $n ($u distinct)"
ds=$(ht_stat "$TMP/out" 's["sampler"]["dropped_stack_table_full"]') || exit 1
dl=$(ht_stat "$TMP/out" 's["sampler"]["dropped_live_table_full"]') || exit 1
echo "dropped: $ds for the stack table, $dl for the live table"
[ "$ds" -ge 1 ] || ht_fail "no sample counted as dropped for the full stack table"
[ "$dl" -ge 1 ] || ht_fail "no sample counted as dropped for the full live table"
dump=$(ht_final "$d") || exit 1
ht_jeprof "$BIN" "$dump" "$TMP/report" || ht_fail "jeprof cannot read $dump"
head -n 5 "$TMP/report"
total=$(sed -n 's/^Total: \([0-9]*\) B$/\1/p' "$TMP/report")
echo "jeprof total: ${total:-?} B of the 307200 B live in deep_alloc (plus libc's own)"
[ -n "$total" ] && [ "$total" -le $((307200 + 262144)) ] || ht_fail "the dump claims more than was live"
