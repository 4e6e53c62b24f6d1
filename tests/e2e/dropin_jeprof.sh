#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# dropin_jeprof.sh - `heaptap jeprof` takes jeprof's command line: on a jemalloc dump of the demo
# program it prints the same --text total and significant rows as /usr/bin/jeprof, the same
# folded stacks as jeprof --collapsed (jeprof's nm <addr> tags removed and its repeated paths
# summed), GIF/PNG/PDF/PS with their magic bytes, callgrind whose self costs add up to the
# total, a --raw file both jeprof and heaptap read back, and a profile fetched over HTTP from
# a program running under the collector. -o picks the format from the extension or refuses
# (exit 2); so does `heaptap callgraph -o` (result.gif is a GIF).
. "$(dirname "$0")/lib/test.sh"
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
BIN=$ROOT/build/examples/leaky
command -v jeprof >/dev/null || { echo "skip: jeprof is not installed"; exit 77; }
command -v dot >/dev/null || { echo "skip: graphviz dot is not installed"; exit 77; }
[ -f "$JE" ] || { echo "skip: $JE is not installed"; exit 77; }
[ -x "$BIN" ] || { echo "FAIL: $BIN is not built (make progs)"; exit 1; }
(cd "$TMP" && LD_PRELOAD=$JE MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0 "$BIN" >/dev/null)
D=$(ls "$TMP"/jeprof.*.f.heap | head -n 1)
[ -f "$D" ] || { echo "FAIL: no jemalloc dump"; exit 1; }

# --text: the total and the rows of 1% or more, as jeprof prints them
for opts in "" "--show_bytes" "--inuse_objects" "--show_bytes --cum"; do
	# shellcheck disable=SC2086
	jeprof --text $opts "$BIN" "$D" 2>/dev/null | awk 'NR == 1 || ($2 + 0 >= 1.0)' >"$TMP/j.txt"
	# shellcheck disable=SC2086
	"$HEAPTAP" jeprof --text $opts "$BIN" "$D" 2>"$TMP/h.err" | awk 'NR == 1 || ($2 + 0 >= 1.0)' >"$TMP/h.txt"
	check "--text $opts" "$(cat "$TMP/j.txt")" "$(cat "$TMP/h.txt")"
done
grep -q '^Total: ' "$TMP/h.txt" || { echo "FAIL: no Total line"; fail=1; }
# no mode at all is --text, as jeprof's is when stdout is not a terminal
check "default mode is --text" "$("$HEAPTAP" jeprof --text "$BIN" "$D" 2>/dev/null)" "$("$HEAPTAP" jeprof "$BIN" "$D" 2>/dev/null)"

# --collapsed: the program's own stacks (from main up) with the same counts
own='^(main|handle_request|open_session|cache_fill)$'
norm_collapsed() { # keeps the part of each stack from main on, when all of it is the program's own
	sed 's/<[0-9a-f]*>//g' | awk -v own="$own" '{
		v = $NF; $NF = ""; sub(/ $/, ""); n = split($0, f, ";"); s = ""; ok = 0
		for (i = 1; i <= n; i++) { if (f[i] == "main") ok = 1; if (ok) { if (f[i] !~ own) { ok = -1; break } s = s (s == "" ? "" : ";") f[i] } }
		if (ok == 1) sum[s] += v
	} END { for (k in sum) print k, sum[k] }' | sort
}
jc=$(jeprof --collapsed "$BIN" "$D" 2>/dev/null | norm_collapsed)
hc=$("$HEAPTAP" jeprof --collapsed "$BIN" "$D" 2>/dev/null | norm_collapsed)
check "--collapsed (program stacks)" "$jc" "$hc"
echo "$hc" | grep -q '^main;cache_fill 8388608$' || { echo "FAIL: cache_fill stack: $hc"; fail=1; }
jt=$(jeprof --collapsed "$BIN" "$D" 2>/dev/null | awk '{ t += $NF } END { print t }')
ht=$("$HEAPTAP" jeprof --collapsed "$BIN" "$D" 2>/dev/null | awk '{ t += $NF } END { print t }')
check "--collapsed total" "$jt" "$ht"

# Graphviz formats to stdout and by -o's extension
magic() { head -c "$2" "$1" | od -An -c | tr -d ' \n'; }
"$HEAPTAP" jeprof --gif "$BIN" "$D" >"$TMP/a.gif" 2>/dev/null || { echo "FAIL: --gif exited $?"; fail=1; }
check "--gif magic" "GIF89a" "$(head -c 6 "$TMP/a.gif")"
"$HEAPTAP" jeprof --png "$BIN" "$D" >"$TMP/a.png" 2>/dev/null || { echo "FAIL: --png exited $?"; fail=1; }
check "--png magic" '211PNG\r\n032\n' "$(magic "$TMP/a.png" 8)"
"$HEAPTAP" jeprof --pdf "$BIN" "$D" 2>/dev/null | head -c 4 >"$TMP/a.pdf"
check "--pdf magic" "%PDF" "$(cat "$TMP/a.pdf")"
"$HEAPTAP" jeprof --ps "$BIN" "$D" 2>/dev/null | head -c 4 >"$TMP/a.ps"
check "--ps magic" "%!PS" "$(cat "$TMP/a.ps")"
"$HEAPTAP" jeprof --svg "$BIN" "$D" 2>/dev/null | grep -q '>cache_fill<' || { echo "FAIL: --svg has no cache_fill box"; fail=1; }
# --dot: the boxes of the program's functions as jeprof draws them (library frames may differ:
# jeprof names a stripped library's frame after the nearest exported symbol)
boxes() { grep -E 'label="(main|cache_fill|handle_request|open_session)\\n' | sort; }
check "--dot boxes (vs jeprof)" "$(jeprof --dot "$BIN" "$D" 2>/dev/null | boxes)" "$("$HEAPTAP" jeprof --dot "$BIN" "$D" 2>/dev/null | boxes)"
"$HEAPTAP" jeprof -o "$TMP/o.png" "$BIN" "$D" 2>/dev/null || { echo "FAIL: -o o.png exited $?"; fail=1; }
check "-o o.png is a PNG" '211PNG\r\n032\n' "$(magic "$TMP/o.png" 8)"
"$HEAPTAP" jeprof -o "$TMP/o.txt" "$BIN" "$D" 2>/dev/null
check "-o o.txt is the text report" "$("$HEAPTAP" jeprof --text "$BIN" "$D" 2>/dev/null)" "$(cat "$TMP/o.txt")"
"$HEAPTAP" jeprof -o "$TMP/o.jpg" "$BIN" "$D" >/dev/null 2>"$TMP/e"
check "-o o.jpg refused" 2 $?
[ -e "$TMP/o.jpg" ] && { echo "FAIL: o.jpg was written"; fail=1; }
"$HEAPTAP" jeprof --svg -o "$TMP/o.gif" "$BIN" "$D" >/dev/null 2>&1
check "--svg -o o.gif refused" 2 $?
"$HEAPTAP" callgraph -o "$TMP/result.gif" "$BIN" "$D" 2>/dev/null
check "callgraph -o result.gif is a GIF" "GIF89a" "$(head -c 6 "$TMP/result.gif")"
"$HEAPTAP" callgraph --png "$BIN" "$D" 2>/dev/null >"$TMP/c.png"
check "callgraph --png" '211PNG\r\n032\n' "$(magic "$TMP/c.png" 8)"
"$HEAPTAP" callgraph -o "$TMP/result.gifx" "$BIN" "$D" >/dev/null 2>&1
check "callgraph -o result.gifx refused" 2 $?
for o in --web --gv --list=main --disasm=main --interactive; do
	"$HEAPTAP" jeprof $o "$BIN" "$D" >/dev/null 2>&1
	check "$o refused" 2 $?
done
"$HEAPTAP" jeprof --text --seconds=5 --tools=/usr/bin "$BIN" "$D" >/dev/null 2>&1
check "--seconds --tools accepted" 0 $?

# --callgrind: self costs add up to the total, cache_fill's is 8 MiB
"$HEAPTAP" jeprof --callgrind "$BIN" "$D" >"$TMP/cg" 2>/dev/null
check "callgrind header" "events: Hits" "$(head -n 1 "$TMP/cg")"
self=$(awk '/^fn=/ { fn = substr($0, 4) } /^calls=/ { skip = 1; next } /^0 / { if (!skip) s[fn] += $2; skip = 0 } END { for (k in s) t += s[k]; print t, s["cache_fill"] }' "$TMP/cg")
check "callgrind self costs" "$("$HEAPTAP" jeprof --collapsed "$BIN" "$D" 2>/dev/null | awk '{ t += $NF } END { print t }') 8388608" "$self"

# --raw: read back by jeprof (no BINARY) and by heaptap
"$HEAPTAP" jeprof --raw "$BIN" "$D" >"$TMP/r.raw" 2>/dev/null || { echo "FAIL: --raw exited $?"; fail=1; }
check "--raw header" "--- symbol" "$(head -n 1 "$TMP/r.raw")"
check "heaptap reads --raw" "$("$HEAPTAP" top "$BIN" "$D" 2>/dev/null | head -n 3)" "$("$HEAPTAP" top "$TMP/r.raw" 2>/dev/null | head -n 3)"
jeprof --text --show_bytes "$TMP/r.raw" 2>/dev/null | grep -q ' cache_fill$' || { echo "FAIL: jeprof does not name cache_fill in our --raw"; fail=1; }

# a remote profile: the collector's /pprof/heap, fetched by heaptap jeprof as by jeprof
LIB=${HEAPTAP_LIB:-$ROOT/build/libheaptap.so}
HOST=$ROOT/build/progs/http_host
if [ -f "$LIB" ] && [ -x "$HOST" ]; then
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	LD_PRELOAD=$LIB HEAPTAP_CONF=http:$port,lg_prof_sample:0 "$HOST" "$TMP/stop" >"$TMP/host.out" 2>&1 &
	hpid=$!
	for _ in $(seq 100); do grep -q '^ready' "$TMP/host.out" && break; sleep 0.1; done
	jr=$(jeprof --text --show_bytes "$HOST" "http://127.0.0.1:$port/pprof/heap" 2>/dev/null | awk 'NR == 1 || / (hog|small)_alloc$/')
	hr=$("$HEAPTAP" jeprof --text --show_bytes "$HOST" "http://127.0.0.1:$port/pprof/heap" 2>"$TMP/f.err" | awk 'NR == 1 || / (hog|small)_alloc$/')
	check "remote --text (vs jeprof)" "$jr" "$hr"
	echo "$hr" | grep -q ' 33554432 .* hog_alloc$' || { echo "FAIL: hog_alloc 32 MiB missing: $hr $(cat "$TMP/f.err")"; fail=1; }
	h2=$("$HEAPTAP" jeprof --text --show_bytes "127.0.0.1:$port" 2>/dev/null | awk 'NR == 1 || / (hog|small)_alloc$/')
	check "host:port means /pprof/heap" "$hr" "$h2"
	"$HEAPTAP" jeprof --text "http://127.0.0.1:$port/nothing-here" >/dev/null 2>"$TMP/f.err"
	rc=$?
	[ $rc = 1 ] && grep -q '404' "$TMP/f.err" || { echo "FAIL: a 404 gives exit $rc: $(cat "$TMP/f.err")"; fail=1; }
	touch "$TMP/stop"
	kill "$hpid" 2>/dev/null
	wait "$hpid" 2>/dev/null
fi
[ $fail = 0 ] && echo "ok: heaptap jeprof"
exit $fail
