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
. "$(dirname "$0")/lib/bigdump.sh"
bigdump_prog
bigdump_gen <<'PY'
# dump 1: 1-3 objects a stack; dump 2 (the peak): the same stacks (the same seed draws the
# same paths and addresses), 2-4 objects
totals = [sum(g.write_paths_dump(prog, os.path.join(tmp, "big.%d.heap" % (d + 1)), paths, 250000,
                                 random.Random(11), objs))
          for d, objs in enumerate([(1, 3), (2, 4)])]
with open(want, "w") as f:
    f.write("%d %d %d\n" % (totals[0], totals[1], len({tuple(p) for p in paths})))
PY
read -r _ want_peak _ <"$TMP/want.txt"
bigdump_size "$TMP/big.1.heap"
bigdump_run top top "$TMP/prog" "$TMP/big.2.heap"
bigdump_run report1 report "$TMP/prog" "$TMP/big.2.heap"
bigdump_run topbase top --base="$TMP/big.1.heap" "$TMP/prog" "$TMP/big.2.heap"
bigdump_run report2 report "$TMP/prog" "$TMP/big.1.heap" "$TMP/big.2.heap"
top=$(bigdump_rss top)
rep=$(bigdump_rss report1)
topb=$(bigdump_rss topbase)
rep2=$(bigdump_rss report2)
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
why="it keeps a copy of the stacks or their frames"
bigdump_rss_within "one dump: report" "$rep" top "$top" 16384 "$why"
bigdump_rss_within "two dumps: report" "$rep2" "top --base" "$topb" 32768 "$why"
exit $fail
