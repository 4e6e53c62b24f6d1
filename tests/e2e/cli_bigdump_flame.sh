#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_bigdump_flame.sh - `heaptap flame` on a big dump costs its merged frames, not its stacks
# times their depth: a ~95 MiB heap_v2 dump of 250,000 stacks (depth 20-30, every frame a
# different address) that fold into 40 function paths. Its peak RSS stays within 16 MiB of
# `heaptap top`'s on the same dump (which keeps no traces; the code that kept every stack's
# frames and sorted them peaked ~200 MiB above it here: 285 MiB against 82 MiB), the SVG's
# total is the dump's sum computed here, and with --minwidth=0 it draws exactly one frame per
# distinct call-path prefix of the 40 paths (plus the root). Peak RSS from /usr/bin/time (the
# plain build: ASan's shadow memory would swamp it). Not timing.
. "$(dirname "$0")/lib/test.sh"
PLAIN=${HEAPTAP_PLAIN:-$ROOT/build/heaptap}
[ -x /usr/bin/time ] || { echo "skip: /usr/bin/time is not installed"; exit 77; }
command -v cc >/dev/null || { echo "skip: no C compiler"; exit 77; }
[ -x "$PLAIN" ] || { echo "FAIL: $PLAIN is not built"; exit 1; }
python3 "$ROOT/bench/gen_bigdump.py" prog "$TMP/src" --funcs 60 || { echo "FAIL: generator"; exit 1; }
cc -O1 -g -o "$TMP/prog" "$TMP/src/bigprog.c" || { echo "FAIL: compiling the program"; exit 1; }
python3 - "$ROOT/bench" "$TMP/prog" "$TMP/big.heap" "$TMP/want.txt" <<'PY'
import random, subprocess, sys, os
sys.path.insert(0, sys.argv[1])
import gen_bigdump as g
prog, out, want = sys.argv[2:5]
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
total = 0
n = 250000
with open(out, "w") as f:
    f.write("heap_v2/1\n  t*: %d: %d [0: 0]\n" % (n, n * 1024))
    for i in range(n):
        k = rnd.randrange(len(paths))
        fr = []
        for fn in paths[k]:
            s, size = names[fn]
            fr.append("0x%x" % (base + s + 1 + rnd.randrange(size - 1)))
        objs = rnd.randint(1, 3)
        total += objs * 1024
        f.write("@ %s\n  t*: %d: %d [0: 0]\n" % (" ".join(fr), objs, objs * 1024))
    f.write("\nMAPPED_LIBRARIES:\n")
    for va, memsz, off, flags in g.load_segments(prog):
        lo, hi = (base + va) & ~0xfff, (base + va + memsz + 0xfff) & ~0xfff
        perm = ("r" if "R" in flags else "-") + ("w" if "W" in flags else "-") + ("x" if "E" in flags else "-") + "p"
        f.write("%x-%x %s %08x 08:01 1234 %s\n" % (lo, hi, perm, off & ~0xfff, os.path.abspath(prog)))
# the merged frames: every distinct prefix of the paths, root first
prefixes = {tuple(reversed(p))[:d] for p in paths for d in range(1, len(p) + 1)}
with open(want, "w") as f:
    f.write("%d %d\n" % (total, len(prefixes) + 1))
PY
[ -s "$TMP/want.txt" ] || { echo "FAIL: the generator wrote nothing"; exit 1; }
read -r want_total want_frames <"$TMP/want.txt"
size_kb=$(($(stat -c %s "$TMP/big.heap") / 1024))
[ "$size_kb" -gt 80000 ] || { echo "FAIL: the generated dump has only $size_kb KiB"; exit 1; }
/usr/bin/time -f "%M" -o "$TMP/rss.top" "$PLAIN" top "$TMP/prog" "$TMP/big.heap" >/dev/null 2>"$TMP/err" ||
	{ echo "FAIL: heaptap top exited $?: $(cat "$TMP/err")"; exit 1; }
/usr/bin/time -f "%M" -o "$TMP/rss.flame" "$PLAIN" flame --minwidth=0 "$TMP/prog" "$TMP/big.heap" >"$TMP/got.svg" 2>"$TMP/err" ||
	{ echo "FAIL: heaptap flame exited $?: $(cat "$TMP/err")"; exit 1; }
check "the SVG's total is the dump's sum" "data-total=\"$want_total\"" "$(grep -o 'data-total="[^"]*"' "$TMP/got.svg")"
check "one frame per distinct call-path prefix, and the root" "$want_frames" "$(grep -o '<title>' "$TMP/got.svg" | wc -l)"
top=$(tail -n 1 "$TMP/rss.top")
fl=$(tail -n 1 "$TMP/rss.flame")
if [ "$fl" -le $((top + 16384)) ]; then
	echo "ok[flame peak RSS $fl KiB, top's $top KiB, for a $size_kb KiB dump]"
else
	echo "FAIL[flame peak RSS $fl KiB vs top's $top KiB for a $size_kb KiB dump: it holds every stack's frames]"
	fail=1
fi
exit $fail
