#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# stats_exact.sh - option stats_exact: the statistics JSON's "exact" object must equal, to the
# byte, the usable sizes tests/progs/stats_exact_prog.c computes itself with malloc_usable_size
# (allocated, freed, live, peak; as differences from a baseline taken at program start), with
# glibc below. Without the option the object must be absent. Sampling must work as before:
# at lg_prof_sample:0 every allocation is a sample (47 in the program), the unwinder's counters
# say the CFI walk read frame rules and never fell back (prof_unwind:libunwind, the old name,
# is the same walk), and the final heap_v2 dump (default rate and rate 0) must parse with
# `heaptap top --show_bytes`.
set -u
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
prog="$HEAPTAP_BUILD/progs/stats_exact_prog"
[ -x "$prog" ] || { echo "missing $prog (make progs)"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0

# check <output file> <exact 0|1> <lg or ""> : compares the JSON with the program's sums
check() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
out, exact, lg = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
lines = {}
for l in open(out):
    k, _, v = l.rstrip("\n").partition(" ")
    lines[k] = v
try:
    base, a, b = (json.loads(lines[k]) for k in ("BASE", "A", "B"))
    exp = dict(kv.split("=") for kv in lines["EXP"].split())
except Exception as e:
    print("bad program output:", e); sys.exit(1)
exp = {k: int(v) for k, v in exp.items()}
bad = []
if not exact:
    if any("exact" in j for j in (base, a, b)):
        bad.append('"exact" present without stats_exact')
else:
    if any("exact" not in j for j in (base, a, b)):
        print('no "exact" object with stats_exact:true'); sys.exit(1)
    if b["options"].get("stats_exact") is not True:
        bad.append("options.stats_exact is not true")
    e0, ea, eb = base["exact"], a["exact"], b["exact"]
    def d(j, k): return j[k] - e0[k]
    want = {
        ("A", "allocated_usable_bytes"): exp["alloc"],
        ("A", "freed_usable_bytes"): exp["freed_a"],
        ("A", "live_usable_bytes"): exp["alloc"] - exp["freed_a"],
        ("B", "allocated_usable_bytes"): exp["alloc"],
        ("B", "freed_usable_bytes"): exp["freed_b"],
        ("B", "live_usable_bytes"): exp["alloc"] - exp["freed_b"],
    }
    for (pt, k), v in want.items():
        got = d(ea if pt == "A" else eb, k)
        if got != v:
            bad.append(f"{pt}: {k} grew by {got}, program counted {v}")
    peak = max(e0["peak_live_usable_bytes"], e0["live_usable_bytes"] + exp["alloc"] - exp["freed_a"])
    for pt, j in (("A", ea), ("B", eb)):
        if j["peak_live_usable_bytes"] != peak:
            bad.append(f"{pt}: peak_live_usable_bytes {j['peak_live_usable_bytes']}, expected {peak}")
        if j["live_usable_bytes"] != j["allocated_usable_bytes"] - j["freed_usable_bytes"]:
            bad.append(f"{pt}: live != allocated - freed")
if lg == "0":
    s = b["sampler"]["samples"] - base["sampler"]["samples"]
    la = a["sampler"]["live_samples"] - base["sampler"]["live_samples"]
    lb = b["sampler"]["live_samples"] - base["sampler"]["live_samples"]
    if (s, la, lb) != (47, 40, 20):
        bad.append(f"lg_prof_sample:0: samples {s} (want 47), live samples {la}/{lb} (want 40/20)")
    # the unwinder's counters: the CFI walk read rules and never stepped by frame pointers
    parses = b["sampler"]["unwind_rule_parses"] - base["sampler"]["unwind_rule_parses"]
    falls = b["sampler"]["unwind_fallbacks"] - base["sampler"]["unwind_fallbacks"]
    mode = b["options"]["prof_unwind"]
    if mode == "dwarf" and not (parses > 0 and falls == 0):
        bad.append(f"prof_unwind:dwarf: {parses} rules parsed (want > 0), {falls} fallbacks (want 0)")
for x in bad: print(x)
sys.exit(1 if bad else 0)
PY
}

run() { # run <name> <exact 0|1> <lg or ""> <conf>
	mkdir -p "$d/$1"
	( cd "$d/$1" && HEAPTAP_CONF="$4" LD_PRELOAD="$HEAPTAP_LIB" "$prog" >out ) ||
		{ echo "$1: program failed"; fail=1; return; }
	check "$d/$1/out" "$2" "$3" || { echo "$1: FAIL"; fail=1; return; }
	echo "$1: ok"
}

run exact_default 1 "" "stats_exact:true,prof_prefix:$d/exact_default/h"
run exact_lg0 1 0 "stats_exact:true,lg_prof_sample:0,prof_prefix:$d/exact_lg0/h"
# a period of 4 KiB: some of the program's ~450 KB sampled and some not in every run (at the
# default rate whether any is sampled is chance: the exact sums must hold on both paths)
run exact_lg12 1 12 "stats_exact:true,lg_prof_sample:12,prof_prefix:$d/exact_lg12/h"
run plain_default 0 "" "prof_prefix:$d/plain_default/h"
run plain_lg0 0 0 "lg_prof_sample:0,prof_prefix:$d/plain_lg0/h"
run plain_lg0_libunwind 0 0 "lg_prof_sample:0,prof_unwind:libunwind,prof_prefix:$d/plain_lg0_libunwind/h"

for r in exact_default exact_lg0 plain_lg0; do
	f=$(ls "$d/$r"/h.*.f.heap 2>/dev/null | head -1)
	[ -n "$f" ] || { echo "$r: no final dump"; fail=1; continue; }
	head -1 "$f" | grep -qx 'heap_v2/[0-9]*' || { echo "$r: not heap_v2"; fail=1; continue; }
	t=$("$HEAPTAP" top --show_bytes "$prog" "$f" 2>&1) || { echo "$t"; echo "$r: heaptap top failed"; fail=1; continue; }
	case $r in
	*lg0) # exact sampling: the 20 blocks left live were allocated in main
		grep -q 'main' <<<"$t" || { echo "$t"; echo "$r: main not in top"; fail=1; continue; } ;;
	esac
	echo "$r: dump parses"
done
exit $fail
