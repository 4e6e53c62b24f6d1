#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sym_maps.sh - run-time addresses to functions and lines through a profile's memory map: a PIE
# main program at a random base, a non-PIE one, a dlopen'ed library at a random base, jeprof's
# catch-all when the profile has no map, the main program given as a renamed copy (matched by
# build ID), a library found through --lib-prefix, and a missing library (one warning, frames
# raw, the rest still symbolized). The profiles come from the program's own backtrace() and
# /proc/self/maps (tests/progs/sym_selfprof.c), so the collector is not involved.
. "$(dirname "$0")/sym_common.inc"
src=$ROOT/tests/progs/sym_selfprof.c
line() { grep -n "$1" "$src" | head -n 1 | cut -d: -f1; }
L_MAIN=$(line MARK_MAIN) L_MAINLIB=$(line MARK_MAIN_LIB) L_MIDDLE=$(line MARK_MIDDLE) L_LEAF=$(line MARK_LEAF)
L_ENTRY=$(line MARK_LIB_ENTRY) L_INNER=$(line MARK_LIB_INNER)
MAIN_STACK="main $src:$L_MAIN;middle $src:$L_MIDDLE;leaf $src:$L_LEAF 4096"
LIB_STACK="main $src:$L_MAINLIB;lib_entry $src:$L_ENTRY;lib_inner $src:$L_INNER 4096"
CFLAGS="-O1 -g -fno-omit-frame-pointer"
mkdir -p "$T/lib"
gcc $CFLAGS -DSYM_LIB -shared -fPIC -o "$T/lib/libsymsp.so" "$src" || fail "cannot build the library"

expect_stacks() { # what, file, stacks...
	local what=$1 out=$2; shift 2
	for s in "$@"; do
		grep -qF -- ";$s" "$out" || { cat "$out"; fail "$what: no stack ending in '$s'"; }
	done
	echo "ok: $what"
}

for pie in -pie -no-pie; do
	pic=-fPIE; [ $pie = -no-pie ] && pic=-fno-PIE
	gcc $CFLAGS $pic $pie -o "$T/prog$pie" "$src" -ldl || fail "cannot build with $pie"
	"$T/prog$pie" "$T/p$pie.heap" "$T/lib/libsymsp.so" || fail "prog$pie failed"
	"$HT" collapsed --lines "$T/prog$pie" "$T/p$pie.heap" >"$T/c$pie" 2>"$T/e$pie" || { cat "$T/e$pie"; fail "collapsed failed ($pie)"; }
	expect_stacks "binary $pie with a library" "$T/c$pie" "$MAIN_STACK" "$LIB_STACK"
	[ -s "$T/e$pie" ] && { cat "$T/e$pie"; fail "unexpected messages ($pie)"; }
done
# The PIE really was relocated (its frames are not link-time addresses).
grep -q '^@ 0x5[0-9a-f]\{11\} ' "$T/p-pie.heap" || fail "the PIE program was not loaded at a high base"

# No memory map at all: jeprof's catch-all maps [0, max] to the program (non-PIE only).
sed '/^MAPPED_LIBRARIES:/,$d' "$T/p-no-pie.heap" >"$T/nomaps.heap"
"$HT" collapsed --lines "$T/prog-no-pie" "$T/nomaps.heap" >"$T/c-nomaps" 2>&1 || fail "collapsed failed without maps"
expect_stacks "non-PIE without a memory map" "$T/c-nomaps" "$MAIN_STACK"

# A renamed copy of the PIE binary, the original gone: matched through the build ID the profile
# carries (heaptap metadata line), not by path or name.
bid=$(readelf -n "$T/prog-pie" | awk '/Build ID/ {print $3}')
[ -n "$bid" ] || fail "no build ID in prog-pie"
mkdir -p "$T/copy" && cp "$T/prog-pie" "$T/copy/renamed"
ln=$(grep -m1 " $T/prog-pie\$" "$T/p-pie.heap")
start=${ln%%-*}; rest=${ln#*-}; limit=${rest%% *}; off=$(echo "$ln" | awk '{print $3}')
{ sed -n 1p "$T/p-pie.heap"; echo "# heaptap: mapping start=0x$start limit=0x$limit offset=0x$off build_id=$bid path=$T/prog-pie"; sed 1d "$T/p-pie.heap"; } >"$T/bid.heap"
rm "$T/prog-pie"
"$HT" collapsed --lines "$T/copy/renamed" "$T/bid.heap" >"$T/c-bid" 2>"$T/e-bid" || { cat "$T/e-bid"; fail "collapsed failed on the copy"; }
expect_stacks "renamed copy matched by build ID" "$T/c-bid" "$MAIN_STACK" "$LIB_STACK"
# The wrong binary for that profile: a build-ID mismatch warning, its frames raw.
"$HT" collapsed --lines "$T/prog-no-pie" "$T/bid.heap" >"$T/c-wrong" 2>"$T/e-wrong" || fail "collapsed failed with the wrong binary"
cat "$T/e-wrong"
grep -q "^heaptap: warning: $T/prog-no-pie: build ID mismatch (profile $bid, file $T/prog-no-pie has [0-9a-f]*); its frames stay unsymbolized\$" "$T/e-wrong" ||
	fail "expected a build-ID mismatch warning"
grep -q "main $src" "$T/c-wrong" && fail "the wrong binary must not symbolize the main program"

# The library moved under a prefix: found with --lib-prefix (jeprof strips leading directories).
mkdir -p "$T/pfx" && mv "$T/lib/libsymsp.so" "$T/pfx/"
"$HT" collapsed --lines --lib-prefix="$T/pfx" "$T/prog-no-pie" "$T/p-no-pie.heap" >"$T/c-pfx" 2>"$T/e-pfx" || fail "collapsed --lib-prefix failed"
expect_stacks "library under --lib-prefix" "$T/c-pfx" "$MAIN_STACK" "$LIB_STACK"

# The library missing: one warning naming it, its frames raw, the main program still resolved.
"$HT" collapsed --lines "$T/prog-no-pie" "$T/p-no-pie.heap" >"$T/c-miss" 2>"$T/e-miss" || fail "collapsed failed with a missing library"
cat "$T/e-miss"
[ "$(grep -c "^heaptap: warning: $T/lib/libsymsp.so: not found; its frames stay unsymbolized\$" "$T/e-miss")" = 1 ] ||
	fail "expected exactly one 'not found' warning for the library"
[ "$(grep -c . "$T/e-miss")" = 1 ] || fail "expected no other message"
expect_stacks "missing library" "$T/c-miss" "$MAIN_STACK"
# Raw frames print as hex, or as module+offset.
grep -Eq "main $src:$L_MAINLIB;(0x|libsymsp\.so\+0x)[0-9a-f]+;" "$T/c-miss" || fail "the missing library's frames should stay raw addresses"
echo "all map cases resolved"
