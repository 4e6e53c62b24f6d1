#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/run.sh - runs every test heaptap has and ends with one line "N passed, N failed, N skipped".
#
# A test is an executable: a unit test binary (build/tests/*), a fuzz corpus replay
# (build/fuzz/replay_* over fuzz/corpus/<name>/), or a script (tests/{static,preload,e2e,browser}/*.sh).
# Exit 0 = pass, 77 = skip (the reason is its last output line), anything else = fail. Each test's
# output goes to build/test-logs/<name>.log; a failure prints its tail. `tests/run.sh PATTERN`
# runs only tests whose name contains PATTERN. Scripts get the environment below.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
export ROOT
export HEAPTAP_BUILD="$ROOT/build"
export HEAPTAP_LIB="$ROOT/build/libheaptap.so"
# The CLI under AddressSanitizer + UBSan, unless a test needs the plain one ($HEAPTAP_PLAIN).
export HEAPTAP="${HEAPTAP:-$ROOT/build/heaptap-asan}"
export HEAPTAP_PLAIN="$ROOT/build/heaptap"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export PATH="/usr/lib/go/bin:$PATH"
filter="${1:-}"
logs="$ROOT/build/test-logs"
mkdir -p "$logs"

pass=0 fail=0 skip=0
failed=()

run_one() { # name, timeout seconds, command...
	local name=$1 limit=$2; shift 2
	[ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && return
	local log="$logs/$name.log" t0 t1 rc
	mkdir -p "${log%/*}"
	t0=$(date +%s.%N)
	timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1 </dev/null
	rc=$?
	t1=$(date +%s.%N)
	local dt; dt=$(printf '%.1f' "$(echo "$t1 - $t0" | bc)")
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1)); printf 'PASS  %-44s %6ss\n' "$name" "$dt"
	elif [ $rc -eq 77 ]; then
		skip=$((skip + 1)); printf 'SKIP  %-44s %6ss  %s\n' "$name" "$dt" "$(tail -n 1 "$log")"
	else
		fail=$((fail + 1)); failed+=("$name")
		[ $rc -eq 124 ] && echo "(timed out after ${limit}s)" >>"$log"
		printf 'FAIL  %-44s %6ss  (exit %d, log %s)\n' "$name" "$dt" "$rc" "${log#$ROOT/}"
		tail -n 25 "$log" | sed 's/^/      | /'
	fi
}

for t in build/tests/*; do
	[ -x "$t" ] && [ -f "$t" ] && run_one "unit/$(basename "$t")" 300 "$t"
done
for r in build/fuzz/replay_*; do
	[ -x "$r" ] || continue
	n=${r##*/replay_}
	run_one "fuzz-replay/$n" 300 "$r" "fuzz/corpus/$n"
done
for dir in static preload e2e browser; do
	for s in tests/$dir/*.sh; do
		[ -f "$s" ] && run_one "$dir/$(basename "$s" .sh)" 600 bash "$s"
	done
done

echo
if ((fail)); then echo "failed: ${failed[*]}"; fi
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
