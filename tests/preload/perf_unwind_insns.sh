#!/bin/bash
# perf_unwind_insns.sh - the instruction budget of a sample's stack capture with the default
# DWARF unwinder, counted by callgrind (deterministic, unlike time on a shared machine):
# perf_churn with lg_prof_sample:0 samples every malloc(32), and the instructions inside
# unw_backtrace and unwind_finish, divided by the number of unw_backtrace calls, are what one
# capture costs. Budget: 960 (874 today, 788 of them in libunwind: ~200 to set up, ~100 for
# each of the 6 raw frames; see docs/INTERNALS.md "Unwinding cost"); more means libunwind steps
# through more profiler frames than record's, or left its cached fast trace for unw_step.
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
bt=$(incl ':backtrace \[.*libunwind'); fin=$(incl ':unwind_finish ')
# calls of unw_backtrace: the calls= lines after each cfn= naming it (by its compressed id)
id=$(grep -oE '\(([0-9]+)\) backtrace$' "$f" | head -1 | grep -oE '[0-9]+')
calls=$(grep -A1 "^cfn=($id)" "$f" | grep '^calls=' | awk -F'[= ]' '{s += $2} END {print s + 0}')
for v in "$bt" "$fin" "$calls"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "FAIL: no callgrind numbers (backtrace '$bt', unwind_finish '$fin', calls '$calls')"; exit 1; }
done
# every malloc is sampled: as many captures as mallocs (a few more from start-up)
[ "$calls" -ge "$n" ] && [ "$calls" -le $((n + 200)) ] ||
	{ echo "FAIL: $calls captures for $n sampled mallocs"; exit 1; }
per=$(( (bt + fin) / calls ))
echo "instructions per capture: $per (unw_backtrace $((bt / calls)), unwind_finish $((fin / calls)); $calls captures; budget 960)"
[ "$per" -ge 200 ] || { echo "FAIL: $per < 200: did libunwind unwind at all?"; exit 1; }
[ "$per" -le 960 ] || { echo "FAIL: a capture costs $per instructions (> 960)"; exit 1; }
echo "ok"
