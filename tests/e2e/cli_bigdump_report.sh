#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_bigdump_report.sh - `heaptap report` on big dumps costs the dumps, its series and its
# merged flame frames, not a copy of the stacks nor the stacks times their depth: two ~95 MiB
# heap_v2 dumps of 250,000 stacks each (depth 20-30, every frame a different address) that fold
# into the same 40 function paths. With one dump its peak RSS stays within 16 MiB of `heaptap
# top`'s on that dump (which keeps no traces); with both (series, peak and differential flame
# graphs) within 32 MiB of `heaptap top --base` on the pair (which loads both and keeps no
# traces; report lends the symbolizer a list of both dumps' samples, 56 bytes a stack). The code
# that copied every stack into one merged profile to symbolize it and kept every stack's frames
# for the flame graphs peaked ~105 MiB and ~114 MiB above them here (187 MiB against 82 MiB, 262
# against 148). Also checked: the peak flame graph's total is the peak dump's sum computed here,
# so is the differential one's (the last dump's), and the growers table is full (every stack
# grew). Peak RSS from /usr/bin/time (the plain build: ASan's shadow memory would swamp it).
# Not timing.
. "$(dirname "$0")/lib/test.sh"
PLAIN=${HEAPTAP_PLAIN:-$ROOT/build/heaptap}
[ -x /usr/bin/time ] || { echo "skip: /usr/bin/time is not installed"; exit 77; }
command -v cc >/dev/null || { echo "skip: no C compiler"; exit 77; }
[ -x "$PLAIN" ] || { echo "FAIL: $PLAIN is not built"; exit 1; }
python3 "$ROOT/bench/gen_bigdump.py" prog "$TMP/src" --funcs 60 || { echo "FAIL: generator"; exit 1; }
cc -O1 -g -o "$TMP/prog" "$TMP/src/bigprog.c" || { echo "FAIL: compiling the program"; exit 1; }
python3 - "$ROOT/bench" "$TMP/prog" "$TMP" <<'PY'
import random, subprocess, sys, os
sys.path.insert(0, sys.argv[1])
import gen_bigdump as g
prog, tmp = sys.argv[2:4]
rnd = random.Random(5)
base = 0x555555554000
names = {}
for line in subprocess.run(["nm", "-S", "--defined-only", prog], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    f = line.split()
    if len(f) == 4 and f[2] in "tT" and f[3].startswith("f") and f[3][1:].isdigit():
        names[f[3]] = (int(f[0], 16), int(f[1], 16))
funcs = sorted(names)
# 40 paths of functions, leaf first; every stack draws fresh addresses inside its path's functions
paths = [[rnd.choice(funcs) for _ in range(rnd.randint(20, 30))] for _ in range(40)]
maps = []
for va, memsz, off, flags in g.load_segments(prog):
    lo, hi = (base + va) & ~0xfff, (base + va + memsz + 0xfff) & ~0xfff
    perm = ("r" if "R" in flags else "-") + ("w" if "W" in flags else "-") + ("x" if "E" in flags else "-") + "p"
    maps.append("%x-%x %s %08x 08:01 1234 %s\n" % (lo, hi, perm, off & ~0xfff, os.path.abspath(prog)))
n = 250000
totals = []
# dump 1: 1-3 objects a stack; dump 2 (the peak): the same stacks, 2-4 objects
for d, (lo, hi) in enumerate([(1, 3), (2, 4)]):
    r = random.Random(11)
    total = 0
    with open(os.path.join(tmp, "big.%d.heap" % (d + 1)), "w") as f:
        f.write("heap_v2/1\n  t*: %d: %d [0: 0]\n" % (n, n * 1024))
        for i in range(n):
            k = r.randrange(len(paths))
            fr = []
            for fn in paths[k]:
                s, size = names[fn]
                fr.append("0x%x" % (base + s + 1 + r.randrange(size - 1)))
            objs = lo + r.randrange(hi - lo + 1)
            total += objs * 1024
            f.write("@ %s\n  t*: %d: %d [0: 0]\n" % (" ".join(fr), objs, objs * 1024))
        f.write("\nMAPPED_LIBRARIES:\n")
        f.writelines(maps)
    totals.append(total)
with open(os.path.join(tmp, "want.txt"), "w") as f:
    f.write("%d %d %d\n" % (totals[0], totals[1], len({tuple(p) for p in paths})))
PY
[ -s "$TMP/want.txt" ] || { echo "FAIL: the generator wrote nothing"; exit 1; }
read -r _ want_peak _ <"$TMP/want.txt"
size_kb=$(($(stat -c %s "$TMP/big.1.heap") / 1024))
[ "$size_kb" -gt 80000 ] || { echo "FAIL: the generated dump has only $size_kb KiB"; exit 1; }
# run NAME ARGS...: runs the plain build under /usr/bin/time; its peak RSS in KiB goes to
# $TMP/rss.NAME, its output to $TMP/out.NAME
run() {
	local name=$1
	shift
	/usr/bin/time -f "%M" -o "$TMP/rss.$name" "$PLAIN" "$@" >"$TMP/out.$name" 2>"$TMP/err" ||
		{ echo "FAIL: heaptap $* exited $?: $(cat "$TMP/err")"; exit 1; }
}
run top top "$TMP/prog" "$TMP/big.2.heap"
run report1 report "$TMP/prog" "$TMP/big.2.heap"
run topbase top --base="$TMP/big.1.heap" "$TMP/prog" "$TMP/big.2.heap"
run report2 report "$TMP/prog" "$TMP/big.1.heap" "$TMP/big.2.heap"
top=$(tail -n 1 "$TMP/rss.top")
rep=$(tail -n 1 "$TMP/rss.report1")
topb=$(tail -n 1 "$TMP/rss.topbase")
rep2=$(tail -n 1 "$TMP/rss.report2")
check "one dump: the peak flame graph's total is the dump's sum" "data-total=\"$want_peak\"" \
	"$(grep -o 'id="flame-peak"[^>]*data-total="[^"]*"' "$TMP/out.report1" | grep -o 'data-total="[^"]*"')"
check "two dumps: the peak flame graph's total is the second dump's sum" "data-total=\"$want_peak\"" \
	"$(grep -o 'id="flame-peak"[^>]*data-total="[^"]*"' "$TMP/out.report2" | grep -o 'data-total="[^"]*"')"
check "two dumps: the differential graph's total is the last dump's sum" "data-total=\"$want_peak\"" \
	"$(grep -o 'id="flame-diff"[^>]*data-total="[^"]*"' "$TMP/out.report2" | grep -o 'data-total="[^"]*"')"
# every one of the 40 stacks grew from the first dump to the second: the growers table lists
# min(40, its 15 rows)
check "two dumps: the growers table is full" "15" \
	"$(sed -n '/id="growers"/,/<\/table>/p' "$TMP/out.report2" | grep -c '<tr data-site=\|<tr class="suspect" data-site=')"
for case in "one dump:$rep:$top:top:16384" "two dumps:$rep2:$topb:top --base:32768"; do
	IFS=: read -r what r t against margin <<<"$case"
	if [ "$r" -le $((t + margin)) ]; then
		echo "ok[$what: report peak RSS $r KiB, $against's $t KiB, for $size_kb KiB dumps]"
	else
		echo "FAIL[$what: report peak RSS $r KiB vs $against's $t KiB for $size_kb KiB dumps: it keeps a copy of the stacks or their frames]"
		fail=1
	fi
done
exit $fail
