#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# mem_handoff.sh - where freed memory stays (issue 16): a producer thread's 200 x 256 KiB blocks
# freed by a consumer thread are charged to the producer's site as bytes freed by another
# thread, exactly at lg_prof_sample:0, in the heap_v2 dump (a line jeprof skips: its total is
# unchanged), in the pprof twin (numeric label bytes_freed_by_other_threads; go tool pprof still
# reads the file) and in heaptap report's "Freed by another thread" table from either file; the sites
# freed by their own thread carry nothing.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
[ "$PROFILER" = heaptap ] || ht_skip "heaptap-only behaviour"
command -v jeprof >/dev/null || ht_skip "jeprof is not installed"
ht_need_prog mem_handoff
d=$TMP/run
ht_run "$d" lg_prof_sample:0,prof_format:heap_v2+pprof "$BIN" >"$TMP/out" 2>"$TMP/err" ||
	ht_fail "mem_handoff exited with $? ($(cat "$TMP/err"))"
want=$(awk '$1 == "xfree" {print $3}' "$TMP/out")
[ -n "$want" ] || ht_fail "no truth line"
dump=$(ht_final "$d") || exit 1
grep -n '# heaptap: xfree' "$dump" || ht_fail "no xfree line in the heap_v2 dump"
n=$(grep -c '# heaptap: xfree' "$dump")
[ "$n" = 1 ] || ht_fail "$n stacks carry bytes freed by another thread, expected 1 (the producer's)"
got=$(sed -n 's/^  # heaptap: xfree [0-9]*: \([0-9]*\)$/\1/p' "$dump")
echo "freed by another thread: $got bytes (truth $want)"
[ "$got" = "$want" ] || ht_fail "the dump says $got bytes, the truth is $want"
# jeprof reads the dump, the line does not count: only the 8 kept blocks are live
ht_jeprof "$BIN" "$dump" "$TMP/jeprof" || ht_fail "jeprof failed"
grep -q "kept_block" "$TMP/jeprof" || ht_fail "jeprof does not show kept_block"
! grep -q "produce_block" "$TMP/jeprof" || ht_fail "jeprof shows produce_block as live"
# pprof: the profile stays valid for go tool pprof (which drops the producer's sample: all its
# values are 0, nothing of it is live) and carries the label's key; heaptap report reads it back
pb=${dump%.heap}.pb.gz
if command -v go >/dev/null; then
	go tool pprof -raw "$pb" >"$TMP/raw" 2>&1 || ht_fail "go tool pprof cannot read $pb: $(head -3 "$TMP/raw")"
fi
python3 -c 'import gzip, sys; sys.exit(0 if b"bytes_freed_by_other_threads" in gzip.open(sys.argv[1]).read() else 1)' "$pb" ||
	ht_fail "the pprof twin has no bytes_freed_by_other_threads label"
# heaptap report, from the heap_v2 dump and from the pprof twin
for f in "$dump" "${dump%.heap}.pb.gz"; do
	"$HEAPTAP_BUILD/heaptap" report -o "$TMP/r.html" "$BIN" "$f" 2>"$TMP/r.err" || ht_fail "report failed on $f: $(cat "$TMP/r.err")"
	grep -q "Freed by another thread" "$TMP/r.html" || ht_fail "report of $f has no 'Freed by another thread' section"
	sed -n '/Freed by another thread/,/<\/table>/p' "$TMP/r.html" | grep -q "produce_block" ||
		ht_fail "report of $f does not name produce_block"
	sed -n '/Freed by another thread/,/<\/table>/p' "$TMP/r.html" | grep -q "local_block\|kept_block" &&
		ht_fail "report of $f charges a same-thread site"
done
echo ok
