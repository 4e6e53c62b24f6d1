#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# dropin_symhint.sh - frames in files without symbols print as FILE+0xOFFSET (the file's base
# name and the offset into it, the same in every run), and once per run a stderr hint says how
# to get names: for a stripped copy of a test program, pass the unstripped file or its debug
# file; for a distribution library dpkg knows, install its -dbgsym package; DEBUGINFOD_URLS
# when unset. --no-symbolize keeps raw addresses.
. "$(dirname "$0")/lib/test.sh"
LIB=${HEAPTAP_LIB:-$ROOT/build/libheaptap.so}
BIN=$ROOT/build/progs/dropin_allocfns
[ -f "$LIB" ] || { echo "FAIL: $LIB is not built"; exit 1; }
[ -x "$BIN" ] || { echo "FAIL: $BIN is not built (make progs)"; exit 1; }
cp "$BIN" "$TMP/prog.stripped" && strip "$TMP/prog.stripped" || { echo "FAIL: strip"; exit 1; }
(cd "$TMP" && LD_PRELOAD=$LIB HEAPTAP_CONF=prof_prefix:$TMP/ht,lg_prof_sample:0 ./prog.stripped) || { echo "FAIL: the program failed"; exit 1; }
D=$(ls "$TMP"/ht.*.f.heap | head -n 1)
# app_build_index's offset in the file (the text segment is mapped at its file offset)
off=$(nm "$BIN" | awk '$3 == "app_build_index" { print $1 }')
unset DEBUGINFOD_URLS
"$HEAPTAP" top --show_bytes "$D" >"$TMP/top" 2>"$TMP/err" || { echo "FAIL: top exited $?"; cat "$TMP/err"; fail=1; }
grep -qE "^ +0 .* prog\.stripped\+0x[0-9a-f]+$" "$TMP/top" || { echo "FAIL: no prog.stripped+0x rows"; cat "$TMP/top"; fail=1; }
grep -qE '0x0000[0-9a-f]{12}$' "$TMP/top" && { echo "FAIL: a bare address in top"; cat "$TMP/top"; fail=1; }
# the caller of the shims is app_build_index: its frame's offset lies within the function
hit=
while read -r _ _ _ cum _ name; do
	case $name in prog.stripped+0x*) ;; *) continue ;; esac
	v=$((${name#prog.stripped+}))
	[ "$cum" = 3145728 ] && [ $v -gt $((0x$off)) ] && [ $v -lt $((0x$off + 64)) ] && hit=yes
done < <(tail -n +2 "$TMP/top")
check "app_build_index's frame as prog.stripped+0xOFFSET" "yes" "$hit"
check "one hint" 1 "$(grep -c 'heaptap: hint:' "$TMP/err")"
grep -q "hint: .*$TMP/prog.stripped is stripped: pass its unstripped copy as BINARY or its debug file under --debug-dir" "$TMP/err" || { echo "FAIL: hint: $(cat "$TMP/err")"; fail=1; }
grep -q 'DEBUGINFOD_URLS=https://' "$TMP/err" || { echo "FAIL: no DEBUGINFOD_URLS in the hint"; fail=1; }
# with the unstripped binary: names, no hint
"$HEAPTAP" top "$BIN" "$D" >"$TMP/top2" 2>"$TMP/err2"
grep -q ' app_build_index$' "$TMP/top2" || { echo "FAIL: BINARY does not name app_build_index"; fail=1; }
grep -q 'hint:' "$TMP/err2" && { echo "FAIL: a hint although every frame has a name: $(cat "$TMP/err2")"; fail=1; }
# --no-symbolize: raw addresses, no hint
"$HEAPTAP" top --no-symbolize "$D" 2>"$TMP/err3" | grep -qE ' 0x[0-9a-f]{16}$' || { echo "FAIL: --no-symbolize does not show addresses"; fail=1; }
grep -q 'hint:' "$TMP/err3" && { echo "FAIL: a hint with --no-symbolize"; fail=1; }

# a distribution library: a frame at offset 0x40 of libz (its ELF header: no function there)
Z=$(readlink -f /usr/lib/x86_64-linux-gnu/libz.so.1 2>/dev/null)
if [ -f "$Z" ] && pkg=$(dpkg -S "$Z" 2>/dev/null || dpkg -S "${Z#/usr}" 2>/dev/null); then
	pkg=${pkg%%:*}
	cat >"$TMP/z.heap" <<EOT
heap_v2/1
  t*: 1: 4096 [0: 0]
@ 0x7f0000000040 0x7f0000000100
  t*: 1: 4096 [0: 0]

MAPPED_LIBRARIES:
7f0000000000-7f0000010000 r-xp 00000000 00:00 0 $Z
EOT
	"$HEAPTAP" collapsed "$TMP/z.heap" >"$TMP/z.out" 2>"$TMP/z.err"
	# (a caller's return address is looked up one byte back, as jeprof does)
	check "library frames" "$(basename "$Z")+0xff;$(basename "$Z")+0x40 4096" "$(cat "$TMP/z.out")"
	grep -q "hint: .*$(basename "$Z"): install $pkg-dbgsym" "$TMP/z.err" || { echo "FAIL: no -dbgsym hint: $(cat "$TMP/z.err")"; fail=1; }
	DEBUGINFOD_URLS=http://127.0.0.1:1 "$HEAPTAP" collapsed "$TMP/z.heap" 2>&1 >/dev/null | grep -q 'set DEBUGINFOD_URLS' &&
		{ echo "FAIL: suggests DEBUGINFOD_URLS although it is set"; fail=1; }
else
	echo "note: dpkg does not know libz here; the -dbgsym hint is not checked"
fi
[ $fail = 0 ] && echo "ok: unnamed frames as FILE+0xOFFSET, one hint"
exit $fail
