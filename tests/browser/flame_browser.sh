#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/browser/flame_browser.sh - heaptap's visual outputs in a real browser. Profiles
# tests/progs/report_slowleak under jemalloc, renders a flame graph SVG, an HTML report, collapsed
# stacks and pprof, then runs flame_browser.mjs (playwright-core + /usr/bin/chromium, headless):
# hover, click-to-zoom, Reset Zoom, Search / Ctrl-F and "Matched:" in the SVG; search boxes, zoom,
# chart hover and self-containment of the report; the same top frames in speedscope (served from
# a python3 http.server on 127.0.0.1). Screenshots go to build/test-artifacts/. Skips (77) when
# node, chromium or jemalloc is missing, or npm cannot install the packages.
set -u
HERE=$ROOT/tests/browser
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
PROG=$HEAPTAP_BUILD/progs/report_slowleak
ART=$ROOT/build/test-artifacts
command -v node >/dev/null || { echo "node is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }
[ -x /usr/bin/chromium ] || { echo "/usr/bin/chromium is not installed"; exit 77; }
[ -r "$JE" ] || { echo "jemalloc ($JE) is not installed"; exit 77; }
[ -x "$PROG" ] || { echo "FAIL: $PROG not built (make progs)"; exit 1; }
if [ ! -d "$HERE/node_modules/playwright-core" ] || [ ! -d "$HERE/node_modules/speedscope/dist/release" ]; then
	command -v npm >/dev/null || { echo "npm is not installed"; exit 77; }
	if ! (cd "$HERE" && timeout 120 npm ci --no-audit --no-fund >/dev/null 2>&1); then
		echo "npm ci could not install playwright-core and speedscope (offline?)"
		exit 77
	fi
fi
d=$(mktemp -d)
srv=
cleanup() {
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	rm -rf "$d"
}
trap cleanup EXIT
mkdir -p "$ART" "$d/www"

MALLOC_CONF=prof:true,lg_prof_interval:20,lg_prof_sample:14,prof_final:true,prof_prefix:$d/jp \
	LD_PRELOAD=$JE "$PROG" 2 >/dev/null || { echo "FAIL: report_slowleak exited $?"; exit 1; }
last=$(ls "$d"/jp.*.f.heap | head -n 1)
H=$HEAPTAP_PLAIN
"$H" top --show_bytes "$PROG" "$last" >"$d/top.txt" || { echo "FAIL: heaptap top"; exit 1; }
"$H" flame "$PROG" "$last" -o "$d/flame.svg" || { echo "FAIL: heaptap flame"; exit 1; }
"$H" report "$PROG" "$d"/jp.*.heap -o "$d/report.html" || { echo "FAIL: heaptap report"; exit 1; }
"$H" collapsed "$PROG" "$last" >"$d/www/profile.collapsed" || { echo "FAIL: heaptap collapsed"; exit 1; }
"$H" pprof "$PROG" "$last" -o "$d/www/profile.pb.gz" || { echo "FAIL: heaptap pprof"; exit 1; }
cp "$d/flame.svg" "$ART/flame.svg"
cp "$d/report.html" "$ART/report.html"
ln -s "$HERE/node_modules/speedscope/dist/release" "$d/www/speedscope"

# A loopback-only static server on a free port.
python3 - "$d/www" "$d/port" <<'EOF' >/dev/null 2>&1 &
import functools, http.server, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), h)
open(sys.argv[2], 'w').write(str(s.server_address[1]))
s.serve_forever()
EOF
srv=$!
for _ in $(seq 50); do [ -s "$d/port" ] && break; sleep 0.1; done
[ -s "$d/port" ] || { echo "FAIL: the loopback http server did not start"; exit 1; }

cd "$HERE" && timeout 90 node flame_browser.mjs "$d/flame.svg" "$d/report.html" "$d/top.txt" \
	"http://127.0.0.1:$(cat "$d/port")" "$ART"
rc=$?
[ $rc -eq 124 ] && echo "FAIL: the browser test took more than 90 s"
exit $rc
