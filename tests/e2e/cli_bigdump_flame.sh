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
. "$(dirname "$0")/lib/bigdump.sh"
bigdump_prog
bigdump_gen <<'PY'
total = sum(g.write_paths_dump(prog, os.path.join(tmp, "big.heap"), paths, 250000, rnd))
# the merged frames: every distinct prefix of the paths, root first
prefixes = {tuple(reversed(p))[:d] for p in paths for d in range(1, len(p) + 1)}
with open(want, "w") as f:
    f.write("%d %d\n" % (total, len(prefixes) + 1))
PY
read -r want_total want_frames <"$TMP/want.txt"
bigdump_size "$TMP/big.heap"
bigdump_run top top "$TMP/prog" "$TMP/big.heap"
bigdump_run flame flame --minwidth=0 "$TMP/prog" "$TMP/big.heap"
check "the SVG's total is the dump's sum" "data-total=\"$want_total\"" "$(grep -o 'data-total="[^"]*"' "$TMP/out.flame")"
check "one frame per distinct call-path prefix, and the root" "$want_frames" "$(grep -o '<title>' "$TMP/out.flame" | wc -l)"
top=$(bigdump_rss top)
fl=$(bigdump_rss flame)
bigdump_rss_within flame "$fl" top "$top" 16384 "it holds every stack's frames"
exit $fail
