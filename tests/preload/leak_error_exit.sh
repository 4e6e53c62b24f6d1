#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# leak_error_exit.sh - prof_leak_error (issue 15, item 9): a program that leaks 4 MiB and leaves
# its output in stdio's buffer (2000 lines and a last word without a newline, stdout a file)
# exits with status 1, its stdout complete (exit() would have flushed it; heaptap's exit path
# must too), and stderr says why: the leak summary, then one line naming prof_leak_error and
# the bytes. Without a leak the status stays the program's (perf_leak_line checks that).
set -u
BIN=$HEAPTAP_BUILD/progs/leak_print
[ -x "$BIN" ] || { echo "missing $BIN (make progs)"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
(cd "$d" && env -u MALLOC_CONF -u HEAPPROFILE HEAPTAP_CONF=prof_leak:true,prof_leak_error:true,lg_prof_sample:0,prof_prefix: \
	LD_PRELOAD="$HEAPTAP_LIB" "$BIN") >"$d/out" 2>"$d/err"
rc=$?
fail=0
[ "$rc" = 1 ] && echo "ok   exit status 1" || { echo "FAIL: exit status $rc, want 1"; fail=1; }
want=$( (seq 0 1999 | sed 's/^/line /'; printf end) )
[ "$(cat "$d/out")" = "$want" ] && echo "ok   stdout complete ($(wc -c <"$d/out") bytes, ends in 'end')" ||
	{ echo "FAIL: stdout lost its buffered end: $(wc -c <"$d/out") bytes, last: $(tail -c 40 "$d/out")"; fail=1; }
grep -q '^heaptap: leak summary: ~4194304 bytes' "$d/err" && echo "ok   the leak summary" ||
	{ echo "FAIL: no leak summary: $(cat "$d/err")"; fail=1; }
grep -qx 'heaptap: prof_leak_error: exit status 1, because ~4194304 bytes are still allocated at exit (the leak summary above)' "$d/err" &&
	[ "$(grep -c '^heaptap:' "$d/err")" = 2 ] && echo "ok   one line says why" ||
	{ echo "FAIL: the why line: $(cat "$d/err")"; fail=1; }
exit $fail
