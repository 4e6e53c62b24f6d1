#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# dropin_flame.sh - `heaptap flame` reads folded stacks (as heaptap collapsed, jeprof --collapsed
# and stackcollapse write them), told apart from profiles by content, from a file or standard
# input, and takes flamegraph.pl's options: the SVG of `heaptap collapsed X | heaptap flame` has
# the same total and frames as `heaptap flame X`, and --title, --subtitle, --countname,
# --nametype, --width, --minwidth, --colors, --inverted, --reverse, --bgcolors, --factor change
# it as flamegraph.pl's do; two count columns make a differential graph.
. "$(dirname "$0")/lib/test.sh"
. "$(dirname "$0")/lib/cli_synth.sh"
cli_synth "$TMP"
new=$TMP/cli_new.raw
"$HEAPTAP" collapsed "$new" >"$TMP/f.folded" 2>/dev/null || { echo "FAIL: collapsed exited $?"; exit 1; }

total() { grep -o 'data-total="[^"]*"' "$1" | head -n 1 | cut -d'"' -f2; }
frames() { grep -o '<g[^>]*><title>[^(<]*' "$1" | sed 's/.*<title>//; s/ *$//' | sort; }
"$HEAPTAP" flame "$new" >"$TMP/p.svg" 2>/dev/null || { echo "FAIL: flame of the profile exited $?"; fail=1; }
"$HEAPTAP" flame --countname=bytes <"$TMP/f.folded" >"$TMP/s.svg" 2>"$TMP/s.err" || { echo "FAIL: flame of stdin exited $?: $(cat "$TMP/s.err")"; fail=1; }
"$HEAPTAP" flame --countname=bytes "$TMP/f.folded" >"$TMP/f.svg" 2>/dev/null || { echo "FAIL: flame of a folded file exited $?"; fail=1; }
check "total (folded on stdin)" "1053624" "$(total "$TMP/s.svg")"
check "total (folded file)" "$(total "$TMP/p.svg")" "$(total "$TMP/f.svg")"
check "frames as from the profile" "$(frames "$TMP/p.svg")" "$(frames "$TMP/s.svg")"
grep -q '<title>hog (1,048,576 bytes, 99.52%)' "$TMP/s.svg" || { echo "FAIL: hog tooltip: $(grep -o '<title>hog[^<]*' "$TMP/s.svg")"; fail=1; }

# flamegraph.pl's options
"$HEAPTAP" flame --title="My heap" --subtitle="run 7" --countname=B --nametype=Site: --width=600 \
	--colors=hot --bgcolors=#102030 "$TMP/f.folded" >"$TMP/o.svg" 2>/dev/null || { echo "FAIL: options exited $?"; fail=1; }
grep -q '<text class="title"[^>]*>My heap</text>' "$TMP/o.svg" || { echo "FAIL: --title"; fail=1; }
grep -q '<text class="subtitle"[^>]*>run 7</text>' "$TMP/o.svg" || { echo "FAIL: --subtitle"; fail=1; }
grep -q '<title>hog (1,048,576 B, ' "$TMP/o.svg" || { echo "FAIL: --countname"; fail=1; }
grep -q 'data-nametype="Site:"' "$TMP/o.svg" || { echo "FAIL: --nametype"; fail=1; }
grep -q '<svg [^>]*width="600"' "$TMP/o.svg" || { echo "FAIL: --width"; fail=1; }
grep -q 'fill="#102030"' "$TMP/o.svg" || { echo "FAIL: --bgcolors"; fail=1; }
[ "$(grep -o 'fill="rgb([^"]*"' "$TMP/o.svg" | sort -u)" != "$(grep -o 'fill="rgb([^"]*"' "$TMP/f.svg" | sort -u)" ] || { echo "FAIL: --colors=hot did not change the colours"; fail=1; }
# --minwidth=1%: leak (0.28%) and new_site (0.19%) are not drawn
"$HEAPTAP" flame --minwidth=1% "$TMP/f.folded" >"$TMP/m.svg" 2>/dev/null
grep -q '<title>leak ' "$TMP/m.svg" && { echo "FAIL: --minwidth=1% drew leak"; fail=1; }
grep -q '<title>hog ' "$TMP/m.svg" || { echo "FAIL: --minwidth=1% dropped hog"; fail=1; }
# --inverted: an icicle graph, root at the top
"$HEAPTAP" flame --inverted "$TMP/f.folded" >"$TMP/i.svg" 2>/dev/null
grep -q 'data-inverted="1"' "$TMP/i.svg" && grep -q '>Icicle Graph<' "$TMP/i.svg" || { echo "FAIL: --inverted"; fail=1; }
# --reverse: leaves at the root, so hog sits directly on the root (depth 1) with main above it
"$HEAPTAP" flame --reverse "$TMP/f.folded" >"$TMP/r.svg" 2>/dev/null
check "--reverse frames" "$(frames "$TMP/p.svg" | sort -u)" "$(frames "$TMP/r.svg" | sort -u)"
y_hog=$(grep -o '<title>hog [^<]*</title><rect x="[^"]*" y="[^"]*"' "$TMP/r.svg" | sed 's/.*y="//; s/"//')
y_main=$(grep -o '<title>main [^<]*</title><rect x="[^"]*" y="[^"]*"' "$TMP/r.svg" | sed 's/.*y="//; s/"//' | sort -n | tail -n 1)
awk -v h="$y_hog" -v m="$y_main" 'BEGIN { exit !(h > m) }' || { echo "FAIL: --reverse: hog (y=$y_hog) is not below main (y=$y_main)"; fail=1; }
# --factor scales the counts
"$HEAPTAP" flame --factor=2 "$TMP/f.folded" >"$TMP/x.svg" 2>/dev/null
check "--factor=2 total" "2107248" "$(total "$TMP/x.svg")"
# two columns: a differential graph (leak grew 1000 -> 3000: red)
printf 'main;handler;leak 1000 3000\nmain;hog 1048576 1048576\n' >"$TMP/d.folded"
"$HEAPTAP" flame "$TMP/d.folded" >"$TMP/d.svg" 2>/dev/null || { echo "FAIL: differential exited $?"; fail=1; }
grep -A1 '<title>leak ' "$TMP/d.svg" | grep -q 'fill="rgb(255,' || { echo "FAIL: leak is not red in the differential graph"; fail=1; }
# jeprof --collapsed output (nm <addr> tags, repeated paths) is folded too
printf 'main<0000000000001000>;hog<0000000000001100> 100\nmain<0000000000001000>;hog<0000000000001100> 50\n' | "$HEAPTAP" flame >"$TMP/j.svg" 2>/dev/null
check "jeprof-style input, repeated paths summed" "150" "$(total "$TMP/j.svg")"
# bad lines are counted; nothing usable is an error; folded and profiles do not mix
printf 'not folded\nmain;a -5\n' | "$HEAPTAP" flame >/dev/null 2>"$TMP/b.err"
check "no stack counts: exit" 1 $?
"$HEAPTAP" flame "$TMP/f.folded" "$new" >/dev/null 2>&1
check "folded and profile mixed: exit" 2 $?
[ $fail = 0 ] && echo "ok: flame reads folded stacks"
exit $fail
