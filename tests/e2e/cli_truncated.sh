#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_truncated.sh - a heap_v2 dump cut short before its MAPPED_LIBRARIES section (a copy
# interrupted, a disk filled) still reads, as jeprof reads what is there, but heaptap warns that
# it looks truncated instead of printing a smaller total silently; a complete dump gets no
# warning, nor does one whose map section is present but empty. Input:
# tests/golden/jemalloc_default.heap cut after its first stack records.
. "$(dirname "$0")/lib/test.sh"
G=$ROOT/tests/golden/jemalloc_default.heap
[ -f "$G" ] || { echo "FAIL: $G missing"; exit 1; }
n=$(grep -n '^MAPPED_LIBRARIES:' "$G" | cut -d: -f1)
[ -n "$n" ] || { echo "FAIL: $G has no MAPPED_LIBRARIES"; exit 1; }

"$HEAPTAP" top "$G" >/dev/null 2>"$TMP/err0" || { echo "FAIL: top of the full dump exited $?"; fail=1; }
grep -q 'truncated' "$TMP/err0" && { echo "FAIL: the complete dump is called truncated"; fail=1; }

# An empty map section is not a truncation (a dump with no stacks and no maps).
"$HEAPTAP" top "$ROOT/tests/golden/synth_heapv2_empty.heap" >/dev/null 2>"$TMP/err1" || { echo "FAIL: top of the empty dump exited $?"; fail=1; }
grep -q 'truncated' "$TMP/err1" && { echo "FAIL: an empty MAPPED_LIBRARIES section is called truncated"; fail=1; }

head -n 6 "$G" >"$TMP/cut.heap"
"$HEAPTAP" top "$TMP/cut.heap" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc = 0 ] || { echo "FAIL: top of the cut dump exited $rc"; fail=1; }
grep -q '^Total: ' "$TMP/out" || { echo "FAIL: no Total line for the cut dump"; fail=1; }
check warning "heaptap: warning: $TMP/cut.heap: no MAPPED_LIBRARIES section (jemalloc and heaptap always write one): the file looks truncated, and its frames cannot be symbolized" \
	"$(grep truncated "$TMP/err")"
for c in collapsed "flame -o $TMP/f.svg" "pprof -o $TMP/p.pb.gz"; do
	"$HEAPTAP" $c "$TMP/cut.heap" >/dev/null 2>"$TMP/err" || { echo "FAIL: $c exited $?"; fail=1; }
	grep -q 'looks truncated' "$TMP/err" || { echo "FAIL: $c does not warn"; fail=1; }
done
[ $fail = 0 ] && echo "ok: collapsed, flame and pprof warn too"
exit $fail
