#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_collapsed.sh - `heaptap collapsed` prints folded stacks that follow the grammar of
# FORMATS.md §9.1 (root first, ';'-separated, one non-negative integer count, or two with
# --negative=separate), merged by name path, with exact values; with --base, shrinking
# stacks are dropped (with a note), kept as before/after pairs, or made absolute. On a real
# jemalloc dump the per-path sums equal `jeprof --collapsed`'s once its <addr> tags are removed.
. "$(dirname "$0")/lib/test.sh"
. "$(dirname "$0")/lib/cli_synth.sh"
cli_synth "$TMP"
grammar() { # label file columns
	local re='^[^;[:space:]][^;]*(;[^;]+)* [0-9]+$'
	[ "$3" = 2 ] && re='^[^;[:space:]][^;]*(;[^;]+)* [0-9]+ [0-9]+$'
	if [ ! -s "$2" ] || grep -vqE "$re" "$2"; then
		echo "FAIL[$1]: lines outside the folded grammar:"; grep -vE "$re" "$2"; fail=1
	fi
}

"$HEAPTAP" collapsed "$TMP/cli_new.raw" >"$TMP/a" || { echo "FAIL: collapsed exited $?"; exit 1; }
grammar plain "$TMP/a" 1
check plain "main;handler;leak 3000
main;hog 1048576
main;new_site 2048" "$(cat "$TMP/a")"
check objects "main;handler;leak 30
main;hog 1
main;new_site 2" "$("$HEAPTAP" collapsed --inuse_objects "$TMP/cli_new.raw")"

"$HEAPTAP" collapsed --base "$TMP/cli_old.raw" "$TMP/cli_new.raw" >"$TMP/b" 2>"$TMP/b.err"
grammar drop "$TMP/b" 1
check drop "main;handler;leak 2000
main;new_site 2048" "$(cat "$TMP/b")"
grep -q 'left out 1 stacks that shrank' "$TMP/b.err" || { echo "FAIL: no note about the dropped stack: $(cat "$TMP/b.err")"; fail=1; }

"$HEAPTAP" collapsed --negative=separate --base "$TMP/cli_old.raw" "$TMP/cli_new.raw" >"$TMP/c"
grammar separate "$TMP/c" 2
check separate "main;gone 5000 0
main;handler;leak 1000 3000
main;hog 1048576 1048576
main;new_site 0 2048" "$(cat "$TMP/c")"

check abs "main;gone 5000
main;handler;leak 2000
main;new_site 2048" "$("$HEAPTAP" collapsed --negative=abs --base "$TMP/cli_old.raw" "$TMP/cli_new.raw")"

check focus "main;handler;leak 3000" "$("$HEAPTAP" collapsed --focus='^hand' "$TMP/cli_new.raw")"
check ignore "main;handler;leak 3000
main;new_site 2048" "$("$HEAPTAP" collapsed --ignore=hog "$TMP/cli_new.raw")"

"$HEAPTAP" collapsed --negative=bogus "$TMP/cli_new.raw" >/dev/null 2>&1
[ $? = 2 ] || { echo "FAIL: --negative=bogus is not a usage error"; fail=1; }

# A real dump: sums per path equal jeprof --collapsed's with nm's <addr> tags removed.
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
BIN=$ROOT/build/examples/leaky
if command -v jeprof >/dev/null && [ -f "$JE" ] && [ -x "$BIN" ]; then
	(cd "$TMP" && LD_PRELOAD=$JE MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0 "$BIN" >/dev/null)
	dump=$(ls "$TMP"/jeprof.*.f.heap | head -n 1)
	"$HEAPTAP" collapsed "$BIN" "$dump" >"$TMP/h"
	grammar real "$TMP/h" 1
	jeprof --collapsed "$BIN" "$dump" 2>/dev/null | sed 's/<[0-9a-f]\{16\}>//g' >"$TMP/j"
	for path in 'main;cache_fill' 'main;handle_request;open_session'; do
		hv=$(grep -E ";$path [0-9]+\$" "$TMP/h" | awk '{ s += $NF } END { print s + 0 }')
		jv=$(grep -E ";$path [0-9]+\$" "$TMP/j" | awk '{ s += $NF } END { print s + 0 }')
		if [ "$hv" != "$jv" ] || [ "$hv" = 0 ]; then
			echo "FAIL[real]: $path: heaptap $hv, jeprof $jv"; fail=1
		else
			echo "ok[real]: $path $hv"
		fi
	done
	ht=$(awk '{ s += $NF } END { print s }' "$TMP/h"); jt=$(awk '{ s += $NF } END { print s }' "$TMP/j")
	[ "$ht" = "$jt" ] || { echo "FAIL[real]: total $ht vs jeprof $jt"; fail=1; }
else
	echo "note: jeprof, jemalloc or the demo missing; real-dump comparison not run"
fi
exit $fail
