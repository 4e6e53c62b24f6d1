#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_bigdump_collapsed.sh - `heaptap collapsed` on a big dump costs its distinct folded lines,
# not its stacks times their depth: a ~100 MiB heap_v2 dump of 250,000 stacks (depth 20-30,
# every frame a different address) that fold into 40 function paths. Its peak RSS stays within
# 16 MiB of `heaptap top`'s on the same dump (which keeps no traces; the code that kept every
# trace's frames and a copy of them as sort keys needed ~70 MiB more here), and its lines are
# exactly the 40 paths with their summed bytes, computed here. Peak RSS from /usr/bin/time
# (the plain build: ASan's shadow memory would swamp it). Not timing.
. "$(dirname "$0")/lib/test.sh"
. "$(dirname "$0")/lib/bigdump.sh"
bigdump_prog
bigdump_gen <<'PY'
sums = g.write_paths_dump(prog, os.path.join(tmp, "big.heap"), paths, 250000, rnd)
lines = {}
for k, p in enumerate(paths):
    key = ";".join(reversed(p))
    lines[key] = lines.get(key, 0) + sums[k]
with open(want, "w") as f:
    for key in sorted(lines, key=lambda s: s.encode()):
        f.write("%s %d\n" % (key, lines[key]))
PY
bigdump_size "$TMP/big.heap"
bigdump_run top top "$TMP/prog" "$TMP/big.heap"
bigdump_run col collapsed "$TMP/prog" "$TMP/big.heap"
check "40 folded lines, summed" "$(cat "$TMP/want.txt")" "$(cat "$TMP/out.col")"
top=$(bigdump_rss top)
col=$(bigdump_rss col)
bigdump_rss_within collapsed "$col" top "$top" 16384 "it holds every stack's frames"
exit $fail
