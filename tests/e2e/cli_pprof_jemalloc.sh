#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_pprof_jemalloc.sh - a jemalloc dump converted with `heaptap pprof` (or `heaptap merge -o
# X.pb.gz`) loses jemalloc's own leading frames, as jeprof and every heaptap report drop them:
# `heaptap top` of the .pb.gz equals `heaptap top` of the dump row for row, `go tool pprof -top`
# charges nothing to libjemalloc, and `heaptap diff --base X.pb.gz DUMP` shows no changed row
# (pprof's whole-number values against the dump's fractional estimates count as unchanged).
# Input: tests/golden/jemalloc_default.heap (a real jemalloc 5.3 dump; its program is gone,
# so frames are named by address: the test needs no symbols).
. "$(dirname "$0")/lib/test.sh"
G=$ROOT/tests/golden/jemalloc_default.heap
[ -f "$G" ] || { echo "FAIL: $G missing"; exit 1; }

"$HEAPTAP" pprof -o "$TMP/x.pb.gz" "$G" 2>/dev/null || { echo "FAIL: heaptap pprof exited $?"; exit 1; }
"$HEAPTAP" merge -o "$TMP/m.pb.gz" "$G" 2>/dev/null || { echo "FAIL: heaptap merge exited $?"; exit 1; }
want=$("$HEAPTAP" top "$G" 2>/dev/null)
echo "$want" | grep -q '^Total: ' || { echo "FAIL: no top of the dump"; exit 1; }
check "top of pprof = top of dump" "$want" "$("$HEAPTAP" top "$TMP/x.pb.gz" 2>/dev/null)"
check "top of merged pprof = top of dump" "$want" "$("$HEAPTAP" top "$TMP/m.pb.gz" 2>/dev/null)"
check "diff pprof vs dump has no rows" "$(printf 'Total: 17.2 MiB -> 17.2 MiB (+1 B, +0.0%%)\n        old         new       delta   delta%%  name')" \
	"$("$HEAPTAP" diff --base "$TMP/x.pb.gz" "$G" 2>/dev/null)"

GO=$(PATH="/usr/lib/go/bin:$PATH" command -v go)
if [ -n "$GO" ]; then
	top=$("$GO" tool pprof -top "$TMP/x.pb.gz" 2>/dev/null)
	echo "$top" | grep -q 'flat%' || { echo "FAIL: go tool pprof read nothing"; fail=1; }
	if echo "$top" | grep -q 'libjemalloc'; then
		echo "FAIL: go tool pprof charges memory to libjemalloc:"; echo "$top"; fail=1
	else
		echo "ok[go tool pprof: no libjemalloc frame]"
	fi
else
	echo "note: go not installed, go tool pprof part not checked"
fi
exit $fail
