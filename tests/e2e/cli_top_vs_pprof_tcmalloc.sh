#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_top_vs_pprof_tcmalloc.sh - `heaptap top` on a gperftools/tcmalloc HEAPPROFILE dump must
# agree with `google-pprof --text`: the same "Total:" line and the same significant rows
# (flat >= 1%), for in-use space and objects and for allocated space (the dump carries both).
. "$(dirname "$0")/lib/test.sh"
TC=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4
BIN=$ROOT/build/examples/leaky
command -v google-pprof >/dev/null || { echo "skip: google-pprof is not installed"; exit 77; }
[ -f "$TC" ] || { echo "skip: $TC is not installed"; exit 77; }
[ -x "$BIN" ] || { echo "FAIL: $BIN is not built (make progs)"; exit 1; }
(cd "$TMP" && LD_PRELOAD=$TC HEAPPROFILE=$TMP/prof "$BIN" >/dev/null 2>&1) || { echo "FAIL: leaky under tcmalloc failed"; exit 1; }
dump=$TMP/prof.0001.heap
[ -s "$dump" ] || { echo "FAIL: tcmalloc wrote no $dump"; ls -l "$TMP"; exit 1; }
for view in --inuse_space --inuse_objects --alloc_space; do
	google-pprof --text $view "$BIN" "$dump" >"$TMP/g.txt" 2>/dev/null || { echo "FAIL[$view]: google-pprof failed"; fail=1; continue; }
	"$HEAPTAP" top $view "$BIN" "$dump" >"$TMP/h.txt" 2>"$TMP/h.err" || { echo "FAIL[$view]: heaptap failed"; cat "$TMP/h.err"; fail=1; continue; }
	gt=$(head -n 1 "$TMP/g.txt"); ht=$(head -n 1 "$TMP/h.txt")
	[ "$gt" = "$ht" ] || { echo "FAIL[$view]: totals differ: google-pprof '$gt', heaptap '$ht'"; fail=1; }
	k=$(awk 'NR > 1 { p = $2; sub(/%/, "", p); if (p + 0 >= 1.0) n++ } END { print n + 0 }' "$TMP/g.txt")
	[ "$k" -ge 1 ] || { echo "FAIL[$view]: expected a significant row, got none"; cat "$TMP/g.txt"; fail=1; continue; }
	[ "$k" -lt 2 ] && k=2
	if diff <(sed -n "2,$((k + 1))p" "$TMP/g.txt") <(sed -n "2,$((k + 1))p" "$TMP/h.txt") >"$TMP/d.txt"; then
		echo "ok[$view]: $gt, top $k rows equal"
	else
		echo "FAIL[$view]: top $k rows differ (< google-pprof, > heaptap):"; cat "$TMP/d.txt"; fail=1
	fi
done
exit $fail
