#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# perf_leak_line.sh - prof_leak prints its summary line only when something is still
# allocated at exit (as jemalloc does): nothing for a program that frees every block, one line
# counting the kept blocks for a program that keeps 64 KiB. Every allocation is sampled
# (lg_prof_sample:0), so the numbers are exact.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
ht_need_prog perf_noleak
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

echo "== everything freed: no leak line"
d=$TMP/clean
ht_run "$d" prof_leak:true,prof_leak_error:true,lg_prof_sample:0 "$BIN" 2>"$d.err"
rc=$?
[ "$rc" = 0 ] || bad "clean run exited with $rc (prof_leak_error saw a leak?)"
if grep -q 'leak summary' "$d.err"; then bad "leak line printed with nothing leaked: $(cat "$d.err")"; fi

echo "== 64 blocks of 1 KiB kept: one line, 65536 bytes"
d=$TMP/leaky
ht_run "$d" prof_leak:true,lg_prof_sample:0 "$BIN" 64 2>"$d.err" || bad "leaky run exited with $?"
line=$(grep '^heaptap: leak summary: ' "$d.err")
echo "$line"
[ "$(grep -c 'leak summary' "$d.err")" = 1 ] || bad "expected exactly one leak line"
echo "$line" | grep -qE '^heaptap: leak summary: ~65536 bytes, ~64 objects, >= 1 contexts?' ||
	bad "leak line does not count 64 blocks of 1 KiB: $line"

[ "$fails" = 0 ] || exit 1
echo "ok"
