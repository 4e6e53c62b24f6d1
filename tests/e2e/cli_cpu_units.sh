#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_cpu_units.sh - the CLI's commands speak CPU time for CPU profiles (heaptap's pprof CPU
# profile and gperftools' binary format, from build/progs/cpu_split runs at 1000 Hz):
#  - diff of two CPU profiles: totals and deltas in ms/s; the new total equals `heaptap top`'s;
#  - merge of two CPU profiles into .pb.gz: go tool pprof says "Type: cpu", heaptap top's total
#    is the sum of the two; into a heap_v2 file, and a CPU with a heap profile: refused (exit 1,
#    one clear line), as are diff/top/report/flame of a CPU and a heap profile;
#  - pprof export of gperftools' CPU format: sample types samples/count and cpu/nanoseconds,
#    period type cpu/nanoseconds;
#  - flame: title "CPU Flame Graph", tooltips in "ns of CPU time", every frame in flamegraph.pl's
#    hot palette (r >= 205, b <= 60) unless --colors says otherwise; a heap profile keeps mem;
#  - report: "CPU time per profile", the period in ms of CPU time, no byte units;
#  - gperftools' own libprofiler.so file (when installed): top, diff, flame and merge the same.
set -u
. "$(dirname "$0")/lib/common.sh"
ht_init
ht_need_prog cpu_split
command -v python3 >/dev/null || ht_skip "python3 is not installed"
export PPROF_TMPDIR=$TMP/pprof HOME=$TMP
d=$TMP/run
mkdir -p "$d"
heap=$ROOT/tests/golden/jemalloc_accum.heap
[ -f "$heap" ] || ht_fail "missing $heap"
for x in s.pb:60000000 t.pb:20000000 s.prof:60000000; do
	f=${x%%:*} n=${x#*:}
	(cd "$d" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=cpu_hz:1000,prof:false "$BIN" api "$n" "$d/$f") \
		>"$d/out.$f" 2>&1 || { cat "$d/out.$f"; ht_fail "cpu_split exited with $?"; }
done
# seconds from heaptap top's "Total: N s"
total() { $HEAPTAP top "$BIN" "$@" | awk '$1 == "Total:" { print $2 }'; }
ts=$(total "$d/s.pb"); tt=$(total "$d/t.pb")
[ -n "$ts" ] && [ -n "$tt" ] || ht_fail "heaptap top gave no totals"
echo "top: s.pb $ts s, t.pb $tt s"

# diff in time units
$HEAPTAP diff --base "$d/t.pb" "$BIN" "$d/s.pb" >"$d/diff" 2>&1 || { cat "$d/diff"; ht_fail "heaptap diff failed"; }
head -3 "$d/diff"
! grep -Eq 'MiB|KiB| B ' "$d/diff" || ht_fail "diff of CPU profiles shows byte units"
python3 - "$d/diff" "$ts" "$tt" <<'PY' || ht_fail "diff totals do not match top's"
import re, sys
line = open(sys.argv[1]).readline()
m = re.match(r"Total: ([0-9.]+) (ms|s) -> ([0-9.]+) (ms|s) \(([+-])([0-9.]+) (ms|s), ", line)
if not m:
    print("no time units in", line); sys.exit(1)
sec = lambda v, u: float(v) / (1000 if u == "ms" else 1)
old, new, delta = sec(m[1], m[2]), sec(m[3], m[4]), sec(m[6], m[7]) * (1 if m[5] == "+" else -1)
ts, tt = float(sys.argv[2]), float(sys.argv[3])
ok = abs(new - ts) <= 0.006 and abs(old - tt) <= 0.006 and abs(delta - (ts - tt)) <= 0.011
print("diff: old %.3f new %.3f delta %.3f; top: %.2f %.2f: %s" % (old, new, delta, tt, ts, "ok" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
grep -Eq '^ +[0-9.]+ (ms|s) +[0-9.]+ (ms|s) +[+-][0-9.]+ (ms|s) .* spin$' "$d/diff" || ht_fail "diff: no spin row in time units"

# mixing CPU and heap profiles is refused
for cmd in "diff --base $heap $BIN $d/s.pb" "merge $BIN $d/s.pb $heap -o $d/mix.pb.gz" "top $BIN $d/s.pb $heap" \
	"report $BIN $d/s.pb $heap -o $d/mix.html" "flame --base $heap $BIN $d/s.pb -o $d/mix.svg"; do
	$HEAPTAP $cmd >"$d/mix.out" 2>"$d/mix.err" && ht_fail "heaptap $cmd: accepted a heap and a CPU profile"
	[ $? = 1 ] || ht_fail "heaptap $cmd: exit status is not 1"
	grep -q 'a CPU profile: CPU time and heap memory cannot be summed or compared' "$d/mix.err" ||
		{ cat "$d/mix.err"; ht_fail "heaptap $cmd: no clear message"; }
done
$HEAPTAP merge "$BIN" "$d/s.pb" "$d/t.pb" -o "$d/m.heap" 2>"$d/mh.err" && ht_fail "merge of CPU profiles into heap_v2 accepted"
grep -q 'CPU profiles merge into pprof only' "$d/mh.err" || { cat "$d/mh.err"; ht_fail "merge into heap_v2: no clear message"; }

# merge of two CPU profiles
$HEAPTAP merge "$BIN" "$d/s.pb" "$d/t.pb" -o "$d/m.pb.gz" || ht_fail "merge of two CPU profiles failed"
tm=$(total "$d/m.pb.gz")
awk -v a="$ts" -v b="$tt" -v m="$tm" 'BEGIN { d = m - a - b; exit !(d < 0.011 && d > -0.011) }' ||
	ht_fail "merged total $tm s is not $ts + $tt s"
if command -v go >/dev/null; then
	go tool pprof -top "$d/m.pb.gz" >"$d/m.go" 2>&1 || { cat "$d/m.go"; ht_fail "go tool pprof cannot read the merged profile"; }
	grep -q '^Type: cpu$' "$d/m.go" || { head "$d/m.go"; ht_fail "the merged profile is not a CPU profile for go tool pprof"; }
fi

# pprof export of gperftools' format
$HEAPTAP pprof "$BIN" "$d/s.prof" -o "$d/e.pb.gz" || ht_fail "heaptap pprof cannot export s.prof"
if command -v go >/dev/null; then
	go tool pprof -raw "$d/e.pb.gz" >"$d/e.raw" 2>&1 || ht_fail "go tool pprof cannot read the export"
	grep -q '^PeriodType: cpu nanoseconds$' "$d/e.raw" || { head "$d/e.raw"; ht_fail "export: period type is not cpu nanoseconds"; }
	grep -Eq '^ *samples/count +cpu/nanoseconds' "$d/e.raw" || { sed -n 1,12p "$d/e.raw"; ht_fail "export: sample types are not samples/count cpu/nanoseconds"; }
fi

# flame: CPU palette, title, unit
fills() { python3 - "$1" "$2" <<'PY'
import re, sys
svg, want = open(sys.argv[1]).read(), sys.argv[2]
fills = [tuple(map(int, f)) for f in re.findall(r'<rect[^>]*fill="rgb\((\d+),(\d+),(\d+)\)"', svg)]
frames = [f for f in fills if f != (200, 200, 200) and not (f[0] == f[1] == f[2])]
hot = [f for f in frames if f[0] >= 205 and f[2] <= 60]
print("%d frames, %d in the hot palette" % (len(frames), len(hot)))
sys.exit(0 if frames and ((len(hot) == len(frames)) == (want == "hot")) else 1)
PY
}
$HEAPTAP flame "$BIN" "$d/s.pb" -o "$d/f.svg" || ht_fail "flame failed"
grep -q '>CPU Flame Graph<' "$d/f.svg" || ht_fail "flame: the title does not say CPU"
grep -q 'ns of CPU time' "$d/f.svg" || ht_fail "flame: the unit is not CPU time"
fills "$d/f.svg" hot || ht_fail "flame: a CPU profile is not drawn in the hot palette"
$HEAPTAP flame "$BIN" "$d/s.prof" -o "$d/fg.svg" && fills "$d/fg.svg" hot || ht_fail "flame of s.prof: not the hot palette"
$HEAPTAP flame --colors=mem "$BIN" "$d/s.pb" -o "$d/fm.svg" && fills "$d/fm.svg" mem || ht_fail "flame --colors=mem is not honoured"
$HEAPTAP flame "$heap" -o "$d/fh.svg" 2>/dev/null && fills "$d/fh.svg" mem || ht_fail "a heap flame graph left the mem palette"
! grep -q 'CPU Flame Graph' "$d/fh.svg" || ht_fail "a heap flame graph says CPU"

# gperftools' own profiler's file (libprofiler.so, when installed): the same units and palette
LP=/usr/lib/x86_64-linux-gnu/libprofiler.so.0
if [ -f "$LP" ]; then
	(cd "$d" && LD_PRELOAD=$LP CPUPROFILE=$d/g.prof CPUPROFILE_FREQUENCY=1000 "$BIN" env 60000000) \
		>"$d/g.out" 2>&1 || { cat "$d/g.out"; ht_fail "cpu_split under libprofiler exited with $?"; }
	tg=$(total "$d/g.prof")
	[ -n "$tg" ] || ht_fail "heaptap top cannot read gperftools' own CPU profile"
	$HEAPTAP diff --base "$d/t.pb" "$BIN" "$d/g.prof" >"$d/gdiff" 2>&1 || { cat "$d/gdiff"; ht_fail "diff with gperftools' profile failed"; }
	grep -Eq '^Total: [0-9.]+ (ms|s) -> [0-9.]+ (ms|s) \(' "$d/gdiff" || { head -2 "$d/gdiff"; ht_fail "diff with gperftools' profile: no time units"; }
	$HEAPTAP flame "$BIN" "$d/g.prof" -o "$d/gf.svg" && fills "$d/gf.svg" hot || ht_fail "flame of gperftools' profile: not the hot palette"
	grep -q '>CPU Flame Graph<' "$d/gf.svg" || ht_fail "flame of gperftools' profile: the title does not say CPU"
	$HEAPTAP merge "$BIN" "$d/g.prof" "$heap" -o "$d/gm.pb.gz" 2>"$d/gm.err" && ht_fail "merge of gperftools' CPU and a heap profile accepted"
	grep -q 'cannot be summed or compared' "$d/gm.err" || ht_fail "merge of gperftools' CPU and a heap profile: no clear message"
	echo "gperftools: top $tg s, $(head -1 "$d/gdiff")"
fi

# report
$HEAPTAP report "$BIN" "$d/t.pb" "$d/s.pb" -o "$d/r.html" || ht_fail "report of CPU profiles failed"
grep -q '<h2>CPU time per profile</h2>' "$d/r.html" || ht_fail "report: no CPU heading"
grep -q '1.000 ms of CPU time (1000 Hz)' "$d/r.html" || ht_fail "report: the period is not CPU time"
python3 - "$d/r.html" <<'PY' || ht_fail "report of CPU profiles shows byte units"
import re, sys
s = open(sys.argv[1]).read()
s = re.sub(r"<script.*?</script>|<style.*?</style>|<svg.*?</svg>", "", s, flags=re.S)
t = re.sub(r"<[^>]+>", " ", s)
bad = re.findall(r"[0-9.]+ (?:MiB|KiB|GiB|B)\b", t)
print("byte values in the report:", bad[:5])
sys.exit(1 if bad else 0)
PY
echo ok
