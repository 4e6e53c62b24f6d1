#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_output.sh - `-o FILE` / `--output=FILE` on the commands that print a report (top, diff,
# collapsed) writes that report to FILE, byte for byte what stdout would get, and nothing to
# stdout; `-o -` is stdout; an unwritable FILE is exit 1 with "heaptap: FILE: <why>". Before,
# -o was accepted and ignored: the file never appeared.
. "$(dirname "$0")/lib/test.sh"
G=$ROOT/tests/golden/jemalloc_default.heap
A=$ROOT/tests/golden/jemalloc_accum.heap
for c in top collapsed diff; do
	extra=(); [ $c = diff ] && extra=(--base "$A")
	want=$("$HEAPTAP" $c "${extra[@]}" "$G" 2>/dev/null)
	[ -n "$want" ] || { echo "FAIL: $c printed nothing"; fail=1; continue; }
	got_stdout=$("$HEAPTAP" $c "${extra[@]}" -o "$TMP/$c.out" "$G" 2>/dev/null)
	rc=$?
	[ $rc = 0 ] || { echo "FAIL: $c -o exited $rc"; fail=1; }
	[ -z "$got_stdout" ] || { echo "FAIL: $c -o still printed to stdout"; fail=1; }
	check "$c -o FILE" "$want" "$(cat "$TMP/$c.out" 2>/dev/null)"
	check "$c --output=-" "$want" "$("$HEAPTAP" $c "${extra[@]}" --output=- "$G" 2>/dev/null)"
done
"$HEAPTAP" top -o "$TMP/no/such/dir/x" "$G" 2>"$TMP/err" >/dev/null
rc=$?
[ $rc = 1 ] || { echo "FAIL: unwritable -o gave exit $rc"; fail=1; }
check "unwritable -o message" "heaptap: $TMP/no/such/dir/x: No such file or directory" "$(cat "$TMP/err")"
exit $fail
