#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# mem_account.sh - the statistics' "memory" object and the dumps' memory figures
# (lib/memacct.c), on glibc, on jemalloc and on tcmalloc underneath: after the program touched
# 64 MiB, allocator_in_use >= the sampled heap (lg_prof_sample:0, so the heap is exact),
# rss >= allocator_in_use - swap, the allocator named; a glibc case that frees 100 MiB of
# 1 KiB blocks it keeps (the last block pins the heap's top) shows allocator_free >= 95 MiB
# while in use stays near 64 MiB. The final heap_v2 dump carries the same figures, stock
# jeprof still reads it with the right total, and `heaptap top` prints the memory line.
set -u
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
prog="$HEAPTAP_BUILD/progs/mem_evidence"
[ -x "$prog" ] || { echo "missing $prog (make progs)"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
TC=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4

# check NAME MODE ALLOCATOR: the assertions on the program's STATS line
check() {
	python3 - "$d/$1/out" "$2" "$3" <<'PY'
import json, sys
out, mode, alloc = sys.argv[1:4]
line = [l for l in open(out) if l.startswith("STATS ")]
if not line:
    print("no STATS line"); sys.exit(1)
m = json.loads(line[0][6:])["memory"]
MiB = 1 << 20
bad = []
if m["allocator"] != alloc:
    bad.append(f"allocator {m['allocator']!r}, expected {alloc!r}")
heap = m["heap_live_estimate"]
if not (64 * MiB <= heap < 66 * MiB):
    bad.append(f"heap_live_estimate {heap} (64 MiB touched at lg_prof_sample:0)")
if m["allocator_in_use"] < heap:
    bad.append(f"allocator_in_use {m['allocator_in_use']} < sampled heap {heap}")
if m["rss"] < m["allocator_in_use"] - m["swap"]:
    bad.append(f"rss {m['rss']} < allocator_in_use {m['allocator_in_use']} - swap {m['swap']}")
if m["rss_anon"] + m["rss_file"] > m["rss"] + 4096 or m["rss_anon"] == 0:
    bad.append(f"rss_anon {m['rss_anon']} + rss_file {m['rss_file']} vs rss {m['rss']}")
if m["allocator_mapped"] < m["allocator_in_use"]:
    bad.append(f"allocator_mapped {m['allocator_mapped']} < in use {m['allocator_in_use']}")
if m["heap_peak_estimate"] < heap:
    bad.append("heap_peak_estimate < heap_live_estimate")
if mode == "retained":
    if m["allocator_free"] < 95 * MiB:
        bad.append(f"allocator_free {m['allocator_free']} < 95 MiB freed and retained")
    if m["allocator_in_use"] > 80 * MiB:
        bad.append(f"allocator_in_use {m['allocator_in_use']} > 80 MiB (the freed blocks counted in use)")
    if m["rss"] < 160 * MiB:
        bad.append(f"rss {m['rss']} < 160 MiB: the retained memory is not resident")
for b in bad: print(b)
print("memory:", {k: m[k] for k in ("allocator", "heap_live_estimate", "allocator_in_use", "allocator_free", "rss")})
sys.exit(1 if bad else 0)
PY
}

run() { # run NAME MODE ALLOCATOR PRELOAD
	mkdir -p "$d/$1"
	( cd "$d/$1" && HEAPTAP_CONF="lg_prof_sample:0,prof_prefix:$d/$1/h" LD_PRELOAD="$4" "$prog" "$2" >out ) ||
		{ echo "$1: program failed"; fail=1; return; }
	check "$1" "$2" "$3" || { echo "$1: FAIL"; fail=1; return; }
	echo "$1: ok"
}

run glibc account glibc "$HEAPTAP_LIB"
run glibc_retained retained glibc "$HEAPTAP_LIB"
if [ -f "$JE" ]; then run jemalloc account jemalloc "$HEAPTAP_LIB $JE"; else echo "jemalloc: not installed, skipped"; fi
if [ -f "$TC" ]; then run tcmalloc account tcmalloc "$HEAPTAP_LIB $TC"; else echo "tcmalloc: not installed, skipped"; fi

# the dump carries the figures; jeprof's total is unchanged by them; top prints the line
f=$(ls "$d"/glibc_retained/h.*.f.heap 2>/dev/null | head -1)
if [ -z "$f" ]; then
	echo "no final dump"; fail=1
else
	for k in allocator heap_live_estimate allocator_in_use allocator_free allocator_trimmable \
		allocator_mapped rss rss_anon rss_file swap cgroup_usage cgroup_limit; do
		grep -q "^# heaptap: memory\.$k=" "$f" || { echo "dump lacks memory.$k"; fail=1; }
	done
	free=$(sed -n 's/^# heaptap: memory.allocator_free=//p' "$f")
	[ "${free:-0}" -ge $((95 << 20)) ] || { echo "dump: allocator_free $free < 95 MiB"; fail=1; }
	if command -v jeprof >/dev/null; then
		tot=$(jeprof --text --show_bytes "$prog" "$f" 2>/dev/null | sed -n 's/^Total: \([0-9]*\) B$/\1/p')
		sed '/^# heaptap: memory\./d' "$f" >"$d/nomem.heap"
		tot0=$(jeprof --text --show_bytes "$prog" "$d/nomem.heap" 2>/dev/null | sed -n 's/^Total: \([0-9]*\) B$/\1/p')
		if [ -z "$tot" ] || [ "$tot" != "$tot0" ] || [ "$tot" -lt $((64 << 20)) ]; then
			echo "jeprof total with the memory lines '$tot', without '$tot0'"; fail=1
		else
			echo "jeprof: total $tot B with and without the memory lines"
		fi
	fi
	t=$("$HEAPTAP" top "$prog" "$f" 2>&1)
	line=$(grep '^Memory: heap ' <<<"$t")
	if [ -z "$line" ] || ! grep -q 'allocator holds .* free' <<<"$line" || ! grep -q 'RSS ' <<<"$line"; then
		echo "$t" | tail -3; echo "top: no memory line"; fail=1
	else
		echo "top: $line"
	fi
	head -1 <<<"$t" | grep -q '^Total: ' || { echo "top: the first line is not Total:"; fail=1; }
fi
exit $fail
