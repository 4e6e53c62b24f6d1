#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# dropin_run_libprefix.sh - `heaptap run --lib_prefix DIR` symbolizes the report AND every file
# it writes (.collapsed, .svg, .pb.gz) from the copies under DIR, and the dump is loaded once:
# a file missing without --lib_prefix is warned about once, not once per output. The program
# profiled is a copy of build/progs/dropin_allocfns that a shell deletes after it ran (as a
# deployment replaces its binary); DIR holds another copy.
. "$(dirname "$0")/lib/test.sh"
export HEAPTAP_LIB=${HEAPTAP_LIB:-$ROOT/build/libheaptap.so}
BIN=$ROOT/build/progs/dropin_allocfns
[ -f "$HEAPTAP_LIB" ] || { echo "FAIL: $HEAPTAP_LIB is not built"; exit 1; }
[ -x "$BIN" ] || { echo "FAIL: $BIN is not built (make progs)"; exit 1; }
mkdir -p "$TMP/app" "$TMP/pfx"
cp "$BIN" "$TMP/pfx/vanishing"

# run_it OUT [run options]: runs the vanishing program, report in $TMP/OUT.txt, stderr in OUT.err
run_it() {
	local out=$1; shift
	(cd "$TMP" && "$HEAPTAP" run --out "$TMP/$out" --conf lg_prof_sample:0 "$@" -- \
		sh -c "cp '$BIN' '$TMP/app/vanishing' && '$TMP/app/vanishing'; rc=\$?; rm -f '$TMP/app/vanishing'; exit \$rc") \
		>"$TMP/$out.txt" 2>"$TMP/$out.err"
}

run_it with --lib_prefix "$TMP/pfx" || { echo "FAIL: run --lib_prefix exited $?"; cat "$TMP/with.err"; fail=1; }
cat "$TMP/with.txt"
sed -n '/allocation site/,/^$/p' "$TMP/with.txt" | grep -q ' app_build_index ' || { echo "FAIL: the report does not name app_build_index"; fail=1; }
f=$(ls "$TMP"/with/heaptap.*.f.collapsed 2>/dev/null | head -n 1)
grep -q ';app_build_index 3145728$' "$f" 2>/dev/null || { echo "FAIL: .collapsed without app_build_index ($f)"; head -n 3 "$f"; fail=1; }
f=$(ls "$TMP"/with/heaptap.*.f.svg 2>/dev/null | head -n 1)
grep -q '<title>app_build_index ' "$f" 2>/dev/null || { echo "FAIL: .svg without app_build_index ($f)"; fail=1; }
f=$(ls "$TMP"/with/heaptap.*.f.pb.gz 2>/dev/null | head -n 1)
"$HEAPTAP" top --show_bytes --no-symbolize "$f" 2>/dev/null | grep -q '^ *3145728 .* app_build_index$' || { echo "FAIL: .pb.gz without app_build_index ($f)"; fail=1; }
grep -q 'warning' "$TMP/with.err" && { echo "FAIL: warnings with --lib_prefix: $(cat "$TMP/with.err")"; fail=1; }

run_it without
check "the missing file is warned about once" 1 "$(grep -c "warning: .*vanishing" "$TMP/without.err")"
check "and no hint repeating it" 0 "$(grep -c 'hint:.*vanishing' "$TMP/without.err")"
grep -q -- '--lib_prefix' "$ROOT/docs/CLI.md" && sed -n '/^## run/,/^## /p' "$ROOT/docs/CLI.md" | grep -q -- '--lib_prefix' || { echo "FAIL: run --lib_prefix is not in docs/CLI.md"; fail=1; }
"$HEAPTAP" run --help | grep -q -- '--lib_prefix' || { echo "FAIL: run --help does not name --lib_prefix"; fail=1; }
[ $fail = 0 ] && echo "ok: run --lib_prefix applies to every output, one load"
exit $fail
