#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_callgraph.sh - `heaptap callgraph` writes the same dot graph as `jeprof --dot` (same
# nodes, labels, font sizes and edges, compared as sorted lines since jeprof orders equal
# edges by hash), honours --nodecount/--nodefraction, and its dot is accepted by Graphviz: the
# SVG (--format=svg, -o x.svg) names the top functions and the PDF starts with %PDF.
. "$(dirname "$0")/lib/test.sh"
. "$(dirname "$0")/lib/cli_synth.sh"
command -v dot >/dev/null || { echo "skip: graphviz dot is not installed"; exit 77; }
cli_synth "$TMP"
new=$TMP/cli_new.raw

"$HEAPTAP" callgraph --show_bytes "$new" >"$TMP/h.dot" 2>"$TMP/h.err" || { echo "FAIL: callgraph exited $?"; cat "$TMP/h.err"; exit 1; }
grep -qF 'N2 [label="hog\n1048576 (99.5%)\r",shape=box,fontsize=57.9];' "$TMP/h.dot" || { echo "FAIL: hog node"; cat "$TMP/h.dot"; fail=1; }
grep -qF 'N1 [label="main\n0 (0.0%)\rof 1053624 (100.0%)\r",shape=box,fontsize=8.0];' "$TMP/h.dot" || { echo "FAIL: main node"; fail=1; }
# Default nodefraction 0.005 of 1053624 B drops every node under 5268 B: only main and hog stay.
[ "$(grep -c '^N[0-9]* \[label' "$TMP/h.dot")" = 2 ] || { echo "FAIL: expected 2 nodes"; cat "$TMP/h.dot"; fail=1; }
"$HEAPTAP" callgraph --nodefraction=0 --edgefraction=0 "$new" >"$TMP/all.dot" 2>/dev/null
[ "$(grep -c '^N[0-9]* \[label' "$TMP/all.dot")" = 5 ] || { echo "FAIL: expected 5 nodes with --nodefraction=0"; fail=1; }
[ "$(grep -c '^N[0-9]* -> N' "$TMP/all.dot")" = 4 ] || { echo "FAIL: expected 4 edges with --edgefraction=0"; cat "$TMP/all.dot"; fail=1; }
"$HEAPTAP" callgraph --nodecount=3 --nodefraction=0 "$new" 2>/dev/null | grep -c '^N[0-9]* \[label' | grep -qx 3 || { echo "FAIL: --nodecount=3"; fail=1; }

if command -v jeprof >/dev/null; then
	for opts in "--show_bytes" "--nodefraction=0 --edgefraction=0" "--inuse_objects --nodefraction=0" "--heapcheck --nodefraction=0"; do
		# shellcheck disable=SC2086
		if diff <(jeprof --dot $opts "$new" 2>/dev/null | sort) <("$HEAPTAP" callgraph $opts "$new" 2>/dev/null | sort) >"$TMP/d"; then
			echo "ok[vs jeprof $opts]"
		else
			echo "FAIL[vs jeprof $opts] (< jeprof, > heaptap):"; cat "$TMP/d"; fail=1
		fi
	done
fi

dot -Tsvg "$TMP/all.dot" -o "$TMP/check.svg" || { echo "FAIL: dot rejected our dot output"; fail=1; }
"$HEAPTAP" callgraph --nodefraction=0 -o "$TMP/g.svg" "$new" 2>/dev/null || { echo "FAIL: -o g.svg exited $?"; fail=1; }
head -c 200 "$TMP/g.svg" | grep -q '<svg\|<?xml' || { echo "FAIL: g.svg is not SVG"; fail=1; }
grep -q '<svg width="100%" height="100%"' "$TMP/g.svg" || { echo "FAIL: the SVG does not fill the window"; fail=1; }
grep -q "svg.addEventListener('wheel'" "$TMP/g.svg" || { echo "FAIL: no pan/zoom script in the SVG"; fail=1; }
if command -v python3 >/dev/null; then
	python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$TMP/g.svg" || { echo "FAIL: the SVG is not well-formed XML"; fail=1; }
fi
for n in leak hog new_site handler main; do
	grep -q ">$n<" "$TMP/g.svg" || { echo "FAIL: $n missing from the SVG"; fail=1; }
done
"$HEAPTAP" callgraph --format=pdf "$new" >"$TMP/g.pdf" 2>/dev/null || { echo "FAIL: --format=pdf exited $?"; fail=1; }
[ "$(head -c 4 "$TMP/g.pdf")" = "%PDF" ] || { echo "FAIL: the PDF does not start with %PDF"; fail=1; }

# A real program: the demo's two sites are boxes in the SVG.
BIN=$ROOT/build/examples/leaky
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
if [ -x "$BIN" ] && [ -f "$JE" ]; then
	(cd "$TMP" && LD_PRELOAD=$JE MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0 "$BIN" >/dev/null)
	dump=$(ls "$TMP"/jeprof.*.f.heap | head -n 1)
	"$HEAPTAP" callgraph --svg "$BIN" "$dump" >"$TMP/r.svg" 2>/dev/null || { echo "FAIL: --svg on the demo dump"; fail=1; }
	for n in cache_fill open_session handle_request main; do
		grep -q ">$n<" "$TMP/r.svg" || { echo "FAIL: $n missing from the demo SVG"; fail=1; }
	done
fi
# Without Graphviz on PATH: a clear message, exit 1, and dot output still works.
PATH=/nonexistent "$HEAPTAP" callgraph --format=svg "$new" >/dev/null 2>"$TMP/nodot.err"
rc=$?
[ $rc = 1 ] && grep -q "Graphviz 'dot' is not on PATH" "$TMP/nodot.err" || { echo "FAIL: no dot: exit $rc, $(cat "$TMP/nodot.err")"; fail=1; }
PATH=/nonexistent "$HEAPTAP" callgraph "$new" 2>/dev/null | grep -q '^digraph' || { echo "FAIL: --format=dot needs no Graphviz"; fail=1; }
"$HEAPTAP" callgraph --format=jpg "$new" >/dev/null 2>&1
[ $? = 2 ] || { echo "FAIL: --format=jpg is not a usage error"; fail=1; }
[ $fail = 0 ] && echo "ok: callgraph"
exit $fail
