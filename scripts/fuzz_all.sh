#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/fuzz_all.sh - runs every libFuzzer target (fuzz/fuzz_*.c) for SECONDS each (default 300),
# one at a time, starting from its committed corpus, then merges what it found that adds
# coverage back into fuzz/corpus/<name>/ (libFuzzer -merge=1, so the corpus stays small).
# Crash inputs are left as build/fuzz/crash-* and the script exits 1 naming them. Not run by
# `make check` (which replays the corpora); run by hand before closing fuzzing work.
# Usage: scripts/fuzz_all.sh [SECONDS] [TARGET...]
set -u
cd "$(dirname "$0")/.."
secs=${1:-300}; shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for f in fuzz/fuzz_*.c; do n=${f#fuzz/fuzz_}; targets+=("${n%.c}"); done
fi
status=0
for t in "${targets[@]}"; do
	make -s "build/fuzz/libfuzzer_$t" || { echo "fuzz_all: cannot build $t" >&2; status=1; continue; }
	work=$(mktemp -d)
	mkdir -p "fuzz/corpus/$t"
	echo "== $t: ${secs}s"
	(cd build/fuzz && "./libfuzzer_$t" -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="$PWD/crash-$t-" "$work" "$OLDPWD/fuzz/corpus/$t") >"build/fuzz/$t.log" 2>&1
	rc=$?
	grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "build/fuzz/$t.log" | sed "s/^/   $t /"
	if [ $rc -ne 0 ]; then
		echo "fuzz_all: $t found a crash (exit $rc): $(ls build/fuzz/crash-"$t"-* 2>/dev/null | head -3)" >&2
		status=1
	fi
	before=$(ls "fuzz/corpus/$t" | wc -l)
	"build/fuzz/libfuzzer_$t" -merge=1 "fuzz/corpus/$t" "$work" >/dev/null 2>&1
	echo "   $t corpus: $before -> $(ls "fuzz/corpus/$t" | wc -l) inputs"
	rm -rf "$work"
done
exit $status
