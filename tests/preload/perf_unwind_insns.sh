#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# perf_unwind_insns.sh - the instruction budget of a sample's stack capture with the default
# DWARF unwinder, counted by callgrind (deterministic, unlike time on a shared machine):
# perf_churn with lg_prof_sample:0 samples every malloc(32), and the instructions inside
# unwind_walk_cfi (lib/cfi.c's walk over cached frame rules) and unwind_finish, divided by the
# number of unwind_walk_cfi calls, are what one capture costs. Budget: 450 (371 today: ~45 per
# frame over the 7 frames above the slow path, 54 to strip; see docs/INTERNALS.md "Unwinding
# cost"); more means the walk steps through more profiler frames, or its rule cache stopped
# answering. Every capture must be answered by the cached rules alone: give_up (cfi.c: a frame
# stepped by its frame pointer, or a walk that could not start) must not be called here.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
ht_need_prog perf_churn
command -v valgrind >/dev/null || { echo "skip: valgrind not installed"; exit 77; }
command -v callgrind_annotate >/dev/null || { echo "skip: callgrind_annotate not installed"; exit 77; }

n=20000
valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.%p" --trace-children=yes \
	env HEAPTAP_CONF=lg_prof_sample:0,prof_final:false LD_PRELOAD="$HEAPTAP_LIB" "$BIN" "$n" \
	>"$TMP/vg.log" 2>&1 || { echo "FAIL: valgrind run failed"; tail -5 "$TMP/vg.log"; exit 1; }
f=$(ls "$TMP"/cg.* | tail -1)
ann=$(callgrind_annotate --inclusive=yes --threshold=100 "$f" 2>/dev/null)
incl() { echo "$ann" | grep -E "$1" | head -1 | awk '{print $1}' | tr -d ,; }
bt=$(incl ':unwind_walk_cfi '); fin=$(incl ':unwind_finish ')
# calls of a function: the calls= lines after each cfn= naming it (by its compressed id)
ncalls() {
	local id
	id=$(grep -oE "\(([0-9]+)\) $1\$" "$f" | head -1 | grep -oE '[0-9]+')
	[ -n "$id" ] || { echo 0; return; }
	grep -A1 "^cfn=($id)" "$f" | grep '^calls=' | awk -F'[= ]' '{s += $2} END {print s + 0}'
}
calls=$(ncalls unwind_walk_cfi)
fallbacks=$(ncalls give_up)
for v in "$bt" "$fin" "$calls"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "FAIL: no callgrind numbers (unwind_walk_cfi '$bt', unwind_finish '$fin', calls '$calls')"; exit 1; }
done
# every malloc is sampled: as many captures as mallocs (a few more from start-up)
[ "$calls" -ge "$n" ] && [ "$calls" -le $((n + 200)) ] ||
	{ echo "FAIL: $calls captures for $n sampled mallocs"; exit 1; }
per=$(( (bt + fin) / calls ))
echo "instructions per capture: $per (CFI walk $((bt / calls)), unwind_finish $((fin / calls)); $calls captures, $fallbacks not by the rules alone; budget 450)"
[ "$fallbacks" -eq 0 ] || { echo "FAIL: $fallbacks captures were not answered by the CFI rules alone"; exit 1; }
[ "$per" -ge 100 ] || { echo "FAIL: $per < 100: did the walk unwind at all?"; exit 1; }
[ "$per" -le 450 ] || { echo "FAIL: a capture costs $per instructions (> 450)"; exit 1; }
echo "ok"
