#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# collector_dlreuse.sh - dlopen after dlclose (issue 14 item 8): library A keeps 3 MiB from
# a_leak and is closed, then library B is loaded at the same address and keeps 5 MiB from
# b_leak. At lg_prof_sample:0 the final dump read by heaptap top, by the real jeprof (heap_v2)
# and by go tool pprof (the .pb.gz twin) must charge exactly 3 MiB to a_leak and 5 MiB to
# b_leak: A's frames moved to a synthetic mapping of libA.so at its dlclose, B's resolve through
# the live map. (Before, both were charged to whichever library the map named at that address.)
# Closing a second handle of A while the first holds it moves nothing (stats); A's real close
# moves its stack. Then A is rebuilt (another build ID) before the CLI reads the dump: a build-ID mismatch
# warning for libA.so, a_leak no longer named, b_leak still right.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
[ "$PROFILER" = jemalloc ] && ht_skip "heaptap's collector only"
ht_need_prog coll_dlreuse
CLI=$HEAPTAP_BUILD/heaptap-asan
[ -x "$CLI" ] || CLI=$HEAPTAP_BUILD/heaptap
build() { # variant lib out
	cc -shared -fPIC -O1 -g -fno-omit-frame-pointer -DVARIANT="$1" -DLIB_"$2" -o "$3" \
		"$ROOT/tests/e2e/lib/dl_reuse.c" || ht_fail "cannot build $3"
}
build 0 A "$TMP/libA.so"
build 0 B "$TMP/libB.so"
d=$TMP/run
mkdir -p "$d"
ht_run "$d" lg_prof_sample:0,prof_format:heap_v2+pprof "$BIN" "$TMP/libA.so" "$TMP/libB.so" 3 5 \
	"$d/truth.txt" >"$d/out"
rc=$?
grep -v "^stats" "$d/out"
[ $rc = 77 ] && ht_skip "the kernel did not place B where A was"
[ $rc = 0 ] || ht_fail "coll_dlreuse exited with $rc"
dump=$(ht_final "$d") || exit 1
echo "== the map's lines for the two libraries:"
sed -n '/^MAPPED_LIBRARIES:/,$p' "$dump" | grep -E 'lib[AB]\.so' | grep ' r-xp '
grep '^# heaptap: mapping .*libA.so' "$dump" | grep -q ' unloaded=1 ' ||
	ht_fail "no unloaded mapping line for libA.so"

# site bytes: the flat column of a report line naming fn (jeprof's layout, bytes first)
flat() { awk -v fn="$1" '$6 == fn { print $1; exit }' "$2"; }
check() { # what report
	local a b
	a=$(flat a_leak "$2") b=$(flat b_leak "$2")
	echo "$1: a_leak=${a:-none} b_leak=${b:-none}"
	[ "$a" = $((3 << 20)) ] || { cat "$2"; ht_fail "$1: a_leak should hold 3 MiB"; }
	[ "$b" = $((5 << 20)) ] || { cat "$2"; ht_fail "$1: b_leak should hold 5 MiB"; }
}
"$CLI" top --show_bytes "$BIN" "$dump" >"$d/top" 2>"$d/top.err" || { cat "$d/top.err"; ht_fail "heaptap top failed"; }
check "heaptap top" "$d/top"
if command -v jeprof >/dev/null; then
	ht_jeprof "$BIN" "$dump" "$d/jeprof" || ht_fail "jeprof failed on $dump"
	check jeprof "$d/jeprof"
else
	echo "jeprof is not installed: not checked"
fi
if command -v go >/dev/null; then
	ht_gopprof "$BIN" "${dump%.heap}.pb.gz" "$d/pprof" || ht_fail "go tool pprof failed"
	# go's layout: flat flat% sum% cum cum% name; values in B
	for s in a_leak:3 b_leak:5; do
		v=$(awk -v fn="${s%%:*}" '$6 == fn { sub(/B$/, "", $1); print $1; exit }' "$d/pprof")
		echo "go tool pprof: ${s%%:*}=${v:-none}"
		[ "$v" = $((${s##*:} << 20)) ] || { cat "$d/pprof"; ht_fail "go tool pprof: ${s%%:*} wrong"; }
	done
else
	echo "go is not installed: not checked"
fi

moved() { python3 -c 'import json, sys
line = next(l for l in open(sys.argv[1]) if l.startswith(sys.argv[2] + " "))
print(json.loads(line.split(" ", 2)[2])["sampler"]["stacks_moved_at_dlclose"])' "$d/out" "$1"; }
held=$(moved stats_held) end=$(moved stats)
echo "stacks moved: $held after closing a handle of A still held, $end after A's real close"
[ "$held" = 0 ] || ht_fail "closing a handle of a library still loaded moved $held stacks"
[ "$end" -ge 1 ] || ht_fail "A's close moved no stack"

# A rebuilt in place: its frames cannot be trusted any more; the CLI says so and does not name
# them after the new file's functions.
build 1 A "$TMP/libA.so.new" && mv "$TMP/libA.so.new" "$TMP/libA.so"
"$CLI" top --show_bytes "$BIN" "$dump" >"$d/top2" 2>"$d/top2.err" || { cat "$d/top2.err"; ht_fail "heaptap top failed"; }
cat "$d/top2.err"
grep -q "^heaptap: warning: $TMP/libA.so: build ID mismatch" "$d/top2.err" ||
	ht_fail "expected a build-ID mismatch warning for libA.so"
[ -z "$(flat a_leak "$d/top2")" ] || ht_fail "a_leak named from the rebuilt library"
[ "$(flat b_leak "$d/top2")" = $((5 << 20)) ] || { cat "$d/top2"; ht_fail "b_leak wrong after A was rebuilt"; }
echo "ok: each leak charged to its own library"
