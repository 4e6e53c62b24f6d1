#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/browser/cli_callgraph.sh - the call graph SVG of `heaptap callgraph --format=svg` works in
# a real browser: it fills the window, the wheel zooms, a drag pans, a double click resets
# (cli_callgraph.mjs, playwright-core + /usr/bin/chromium, headless, file:// only). Input: a
# jemalloc dump of the demo program. Skips (77) when node, chromium, dot or jemalloc is missing
# or the browser packages cannot be installed.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
HERE=$ROOT/tests/browser
HEAPTAP=${HEAPTAP:-$ROOT/build/heaptap-asan}
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
BIN=$ROOT/build/examples/leaky
command -v node >/dev/null || { echo "node is not installed"; exit 77; }
command -v dot >/dev/null || { echo "graphviz dot is not installed"; exit 77; }
[ -x /usr/bin/chromium ] || { echo "/usr/bin/chromium is not installed"; exit 77; }
[ -r "$JE" ] || { echo "jemalloc ($JE) is not installed"; exit 77; }
[ -x "$BIN" ] || { echo "FAIL: $BIN not built (make progs)"; exit 1; }
if [ ! -d "$HERE/node_modules/playwright-core" ]; then
	command -v npm >/dev/null || { echo "npm is not installed"; exit 77; }
	(cd "$HERE" && timeout 120 npm ci --no-audit --no-fund >/dev/null 2>&1) || { echo "npm ci could not install playwright-core (offline?)"; exit 77; }
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
(cd "$TMP" && LD_PRELOAD=$JE MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0 "$BIN" >/dev/null) || { echo "FAIL: leaky under jemalloc"; exit 1; }
dump=$(ls "$TMP"/jeprof.*.f.heap | head -n 1)
"$HEAPTAP" callgraph --format=svg -o "$TMP/graph.svg" "$BIN" "$dump" 2>/dev/null || { echo "FAIL: heaptap callgraph exited $?"; exit 1; }
cd "$HERE" && timeout 90 node cli_callgraph.mjs "$TMP/graph.svg"
