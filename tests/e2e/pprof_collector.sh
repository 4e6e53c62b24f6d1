#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# pprof_collector.sh - the collector's three formats of ONE final dump agree: a program run
# under libheaptap.so with prof_format:heap_v2+pprof+legacy, at lg_prof_sample:0 (exact) and
# at the default rate (sampled). In-use bytes from the heap_v2 file (heaptap top, jeprof's
# scaling of the pre-compensated counts), from the pprof file (go tool pprof -raw and
# heaptap top: the unbiased values, truncated per stack) and from the legacy text (go tool
# pprof -raw, go's own per-record scaling) must match within rounding: exactly at rate 1,
# within 0.1% when sampled. Then `heaptap pprof` turns the pprof dump into a symbolized
# profile whose site functions go tool pprof shows with -symbolize=none (names from the file).
set -u
. "$(dirname "$0")/lib/common.sh"
[ "$PROFILER" = heaptap ] || ht_skip "compares heaptap's own output formats"
ht_init
command -v go >/dev/null || ht_skip "go (go tool pprof) is not installed"
ht_need_prog truth_sites
export PPROF_TMPDIR="$TMP/pprof" HOME="$TMP"

raw_inuse() { # sum of the inuse_space column of go tool pprof -raw (the last value column)
	go tool pprof -raw -symbolize=none "$1" 2>"$TMP/raw.err" | awk '
		/^Samples:/ { s = 1; getline; n = NF; next } /^Locations/ { s = 0 }
		s && /^ *-?[0-9]/ && /:/ { v = $n; sub(":", "", v); t += v } END { printf "%d\n", t }'
}
ht_total() { "$HEAPTAP" top --show_bytes --no-symbolize "$1" 2>"$TMP/top.err" | awk '/^Total:/ { print $2 }'; }

for mode in exact sampled; do
	d=$TMP/$mode
	conf=prof_format:heap_v2+pprof+legacy
	[ $mode = exact ] && conf="lg_prof_sample:0,$conf"
	ht_run "$d" "$conf" "$BIN" $mode "$d/truth.txt" >/dev/null || ht_fail "$mode: truth_sites exited with $?"
	heap=$(ht_final "$d") || exit 1
	pb=${heap%.heap}.pb.gz txt=${heap%.heap}.txt
	[ -s "$pb" ] && [ -s "$txt" ] || { ls -l "$d"; ht_fail "$mode: no pprof or legacy twin of $heap"; }
	head -n 1 "$txt" | grep -Eq '^heap profile: +[0-9]+: +[0-9]+ \[ +[0-9]+: +[0-9]+\] @ heap_v2/[0-9]+$' ||
		ht_fail "$mode: legacy header: $(head -n 1 "$txt")"
	a=$(ht_total "$heap"); b=$(raw_inuse "$pb"); c=$(raw_inuse "$txt"); e=$(ht_total "$pb")
	echo "$mode: heap_v2 (heaptap) $a, pprof (go) $b, pprof (heaptap) $e, legacy (go) $c"
	[ -n "$a" ] && [ "$b" -gt 1000000 ] || { cat "$TMP/raw.err" "$TMP/top.err"; ht_fail "$mode: no totals"; }
	[ "$b" = "$e" ] || ht_fail "$mode: heaptap reads the pprof dump as $e, go tool pprof as $b"
	tol=$([ $mode = exact ] && echo 0 || echo 0.001)
	awk -v a="$a" -v b="$b" -v c="$c" -v t="$tol" 'BEGIN {
		d1 = a - b; if (d1 < 0) d1 = -d1; d2 = c - b; if (d2 < 0) d2 = -d2
		exit !(d1 <= t * b + 0.5 && d2 <= t * b + 0.5) }' ||
		ht_fail "$mode: formats disagree beyond tolerance $tol"
done

# the sampled pprof dump, symbolized by heaptap, names the site functions by itself
site=$(awk '$1 == "site" { print $2; exit }' "$TMP/sampled/truth.txt")
[ -n "$site" ] || ht_fail "no site in the truth file"
"$HEAPTAP" pprof "$BIN" "$pb" -o "$TMP/sym.pb.gz" || ht_fail "heaptap pprof failed"
go tool pprof -top -symbolize=none -nodecount=1000 -nodefraction=0 "$TMP/sym.pb.gz" >"$TMP/sym.top" 2>&1 </dev/null ||
	{ cat "$TMP/sym.top"; ht_fail "go tool pprof cannot read the symbolized export"; }
grep -q " $site\$" "$TMP/sym.top" || { cat "$TMP/sym.top"; ht_fail "site $site not named in the export"; }
echo "PASS"
