#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_top_cxx.sh - C++ allocations under jemalloc's own profiler (every allocation sampled):
# `heaptap top` trims jemalloc's frames and `operator new` the way jeprof's skip list intends, so
# each site of tests/progs/truth_cxx shows exactly the bytes its truth file states (cum column,
# usable sizes), `operator new[]` callers own their arrays (flat), and nothing is charged to the
# allocator itself (stock jeprof charges it all to `malloc_usable_size` here: docs/CLI.md).
. "$(dirname "$0")/lib/test.sh"
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
BIN=$ROOT/build/progs/truth_cxx
[ -f "$JE" ] || { echo "skip: $JE is not installed"; exit 77; }
[ -x "$BIN" ] || { echo "FAIL: $BIN is not built (make progs)"; exit 1; }
(cd "$TMP" && LD_PRELOAD=$JE MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0 "$BIN" "$TMP/truth.txt" >/dev/null 2>&1) ||
	{ echo "FAIL: truth_cxx under jemalloc failed"; exit 1; }
dump=$(ls "$TMP"/jeprof.*.f.heap | head -n 1)
"$HEAPTAP" top --show_bytes "$BIN" "$dump" >"$TMP/top.txt" || { echo "FAIL: heaptap top exited $?"; exit 1; }
cat "$TMP/top.txt" | head -8
n=0
while read -r _ name req usable col objs; do
	want=${usable#usable=}
	got=$(awk -v n="$name" '$6 == n && NF == 6 { print $4 }' "$TMP/top.txt")
	[ "$want" = 0 ] && [ -z "$got" ] && got=0
	if [ "$got" != "$want" ]; then
		echo "FAIL: $name: cum $got, truth $want"; fail=1
	else
		echo "ok: $name cum $got"
	fi
	n=$((n + 1))
done < <(grep '^site ' "$TMP/truth.txt")
[ $n -ge 4 ] || { echo "FAIL: only $n sites in the truth file"; fail=1; }
for site in cxx_new_arrays cxx_new_objects; do
	awk -v n="$site" '$6 == n && $1 == $4 && $1 > 0 { ok = 1 } END { exit !ok }' "$TMP/top.txt" ||
		{ echo "FAIL: $site does not own its memory (flat != cum)"; fail=1; }
done
if awk '$1 > 0 && ($6 == "operator" || $6 == "malloc_usable_size" || $6 ~ /^libjemalloc/ || $6 ~ /^malloc/) { bad = 1 } END { exit !bad }' "$TMP/top.txt"; then
	echo "FAIL: memory charged to the allocator"; fail=1
fi
exit $fail
