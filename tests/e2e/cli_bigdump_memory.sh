#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_bigdump_memory.sh - a big text dump is streamed, not held: `heaptap top` on a 96 MiB
# heap_v2 dump whose bulk is per-thread lines (one per thread and stack, as a many-threaded
# jemalloc writes them; parsed, not kept) peaks well below the file's size in resident memory,
# and prints what the same dump prints when cut to its records that matter. Peak RSS comes
# from /usr/bin/time (the plain build: ASan's shadow memory would swamp it). Not timing.
. "$(dirname "$0")/lib/test.sh"
PLAIN=${HEAPTAP_PLAIN:-$ROOT/build/heaptap}
[ -x /usr/bin/time ] || { echo "skip: /usr/bin/time is not installed"; exit 77; }
[ -x "$PLAIN" ] || { echo "FAIL: $PLAIN is not built"; exit 1; }
python3 - "$TMP/big.heap" "$TMP/small.heap" <<'PY'
import sys
threads = "".join("  t%d: 1: 1024 [0: 0]\n" % t for t in range(1, 1500))
with open(sys.argv[1], "w") as big, open(sys.argv[2], "w") as small:
    for f in (big, small):
        f.write("heap_v2/1\n  t*: 3000: 3072000 [0: 0]\n")
    for i in range(3000):
        rec = "@ 0x%x 0x%x 0x401000\n  t*: 1: 1024 [0: 0]\n" % (0x400000 + 16 * (i % 50), 0x402000 + 16 * (i % 7))
        big.write(rec + threads)
        small.write(rec)
    for f in (big, small):
        f.write("\nMAPPED_LIBRARIES:\n")
PY
size_kb=$(($(stat -c %s "$TMP/big.heap") / 1024))
[ "$size_kb" -gt 90000 ] || { echo "FAIL: the generated dump has only $size_kb KiB"; exit 1; }
/usr/bin/time -f "%M" -o "$TMP/rss" "$PLAIN" top --no-symbolize "$TMP/big.heap" >"$TMP/big.txt" 2>"$TMP/err" ||
	{ echo "FAIL: heaptap top exited $?: $(cat "$TMP/err")"; exit 1; }
rss=$(tail -n 1 "$TMP/rss")
check "top of the big dump = top of its records" "$("$PLAIN" top --no-symbolize "$TMP/small.heap" 2>/dev/null)" "$(cat "$TMP/big.txt")"
# the model of 3,000 three-frame stacks is small: the whole peak is the program and a window of the file
if [ "$rss" -lt $((size_kb / 2)) ]; then
	echo "ok[peak RSS $rss KiB for a $size_kb KiB dump]"
else
	echo "FAIL[peak RSS $rss KiB for a $size_kb KiB dump: the file is held in memory]"; fail=1
fi
exit $fail
