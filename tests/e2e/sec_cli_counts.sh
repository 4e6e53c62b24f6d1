#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sec_cli_counts.sh - absurd counts (1e30 bytes; issue 14, item 9) give sane output: integer
# columns saturate at 9223372036854775807 instead of wrapping to a negative number (a
# float-to-integer overflow, undefined behaviour the sanitizer build now traps), `collapsed`
# keeps the stacks instead of calling them "shrank", and every command finishes cleanly.
. "$(dirname "$0")/lib/test.sh"
big=1000000000000000000000000000000
cat >"$TMP/huge.heap" <<EOT
heap_v2/1
  t*: 2: $big [1: $big]
@ 0x401000
  t*: 1: $big [0: 0]
@ 0x401001
  t*: 1: $big [1: $big]
MAPPED_LIBRARIES:
EOT
max=9223372036854775807
out=$("$HEAPTAP" top --show_bytes --no-symbolize "$TMP/huge.heap"); rc=$?
check "top exit" 0 "$rc"
check "top bytes" "Total: $max B
$max  50.0%  50.0% $max  50.0% 0x0000000000401000
$max  50.0% 100.0% $max  50.0% 0x0000000000401001" "$out"
out=$("$HEAPTAP" top --no-symbolize "$TMP/huge.heap" | head -n 1)
check "top MB" "Total: 1907348632812500037926912.0 MB" "$out"
out=$("$HEAPTAP" collapsed --no-symbolize "$TMP/huge.heap" 2>"$TMP/err"); rc=$?
check "collapsed exit" 0 "$rc"
check "collapsed" "0x0000000000401000 $max
0x0000000000401001 $max" "$out"
check "collapsed stderr" "" "$(cat "$TMP/err")"
out=$("$HEAPTAP" collapsed --no-symbolize --negative=separate --base="$TMP/huge.heap" "$TMP/huge.heap")
check "collapsed separate" "0x0000000000401000 $max $max
0x0000000000401001 $max $max" "$out"
# Every other command reads and renders them without tripping the sanitizers.
for c in "diff --base=$TMP/huge.heap" "diff --text --base=$TMP/huge.heap" callgraph \
	"flame -o $TMP/x.svg" "pprof -o $TMP/x.pb.gz" "merge -o $TMP/x.heap" "report -o $TMP/x.html" "top --alloc_objects"; do
	$HEAPTAP $c --no-symbolize "$TMP/huge.heap" >"$TMP/out" 2>"$TMP/err"; rc=$?
	check "$c" 0 "$rc"
	grep -q "runtime error" "$TMP/err" && { echo "FAIL[$c]: $(cat "$TMP/err")"; fail=1; }
done
# The pprof and merged heap_v2 copies read back with the same saturated numbers.
check "pprof copy" "Total: $max B" "$("$HEAPTAP" top --show_bytes "$TMP/x.pb.gz" | head -n 1)"
check "merged copy" "Total: $max B" "$("$HEAPTAP" top --show_bytes --no-symbolize "$TMP/x.heap" | head -n 1)"
exit $fail
