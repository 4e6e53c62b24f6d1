#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sym_debugfile.sh - separate and compressed debug info: the same frames as from the unstripped
# binary when the DWARF sits in a debug file found by build ID under the debug root
# (HEAPTAP_DEBUG_ROOT / --debug-dir), by .gnu_debuglink (same directory, .debug/, debug root),
# with compressed sections (-gz and objcopy --compress-debug-sections); a debuglink file with
# the wrong CRC is refused; with no debug file, names still come from the symbol table.
. "$(dirname "$0")/sym_common.inc"
src=$ROOT/tests/progs/sym_inline.c
gcc -O2 -g -o "$T/full" "$src" || fail "cannot build"
callsites "$T/full" >"$T/sites"
a2l() { "$HT" addr2line -f -i -C -a "$@" <"$T/sites"; }
a2l -e "$T/full" >"$T/want" || fail "heaptap addr2line failed"
grep -q "sym_inline.c:[0-9]" "$T/want" || fail "the unstripped binary gave no lines"
same() { # what, output file
	cmp -s "$T/want" "$2" || { diff "$T/want" "$2" | head -n 20; fail "$1: frames differ from the unstripped binary"; }
	echo "ok: $1"
}
bid=$(readelf -n "$T/full" | awk '/Build ID/ {print $3}')
[ -n "$bid" ] || fail "no build ID"

# 1. By build ID under a private debug root; the binary keeps its symbol table.
mkdir -p "$T/root/.build-id/${bid:0:2}" "$T/b1"
objcopy --only-keep-debug "$T/full" "$T/root/.build-id/${bid:0:2}/${bid:2}.debug"
objcopy --strip-debug "$T/full" "$T/b1/prog"
a2l -e "$T/b1/prog" >"$T/none"
grep -q "sym_inline.c:[0-9]" "$T/none" && fail "lines found without any debug file"
grep -qx first_site "$T/none" || fail "the symbol table should still name first_site"
echo "ok: no debug file, names from the symbol table"
HEAPTAP_DEBUG_ROOT=$T/root a2l -e "$T/b1/prog" >"$T/o1"; same "build ID via HEAPTAP_DEBUG_ROOT" "$T/o1"
a2l --debug-dir="$T/root" -e "$T/b1/prog" >"$T/o1b"; same "build ID via --debug-dir" "$T/o1b"

# 2. Fully stripped (no .symtab either): names come from the debug file's symbol table.
strip --strip-all -o "$T/b1/stripped" "$T/full"
HEAPTAP_DEBUG_ROOT=$T/root a2l -e "$T/b1/stripped" >"$T/o2"; same "strip --strip-all + build ID" "$T/o2"

# 3. .gnu_debuglink: next to the binary, in .debug/, and under the debug root's copy of its directory.
objcopy --only-keep-debug "$T/full" "$T/prog.debug"
for where in same dotdebug root; do
	d=$T/l-$where; mkdir -p "$d"
	objcopy --strip-debug --add-gnu-debuglink="$T/prog.debug" "$T/full" "$d/prog"
	case $where in
	same) cp "$T/prog.debug" "$d/prog.debug" ;;
	dotdebug) mkdir -p "$d/.debug" && cp "$T/prog.debug" "$d/.debug/prog.debug" ;;
	root) mkdir -p "$T/lroot$d" && cp "$T/prog.debug" "$T/lroot$d/prog.debug" ;;
	esac
	HEAPTAP_DEBUG_ROOT=$T/lroot a2l -e "$d/prog" >"$T/o3-$where"; same "debuglink ($where)" "$T/o3-$where"
done

# 4. Without build IDs the debuglink CRC decides: a debug file of another build is refused.
gcc -O2 -g -Wl,--build-id=none -o "$T/nobid" "$src"
objcopy --only-keep-debug "$T/nobid" "$T/nobid.debug"
mkdir -p "$T/crc"
objcopy --strip-debug --add-gnu-debuglink="$T/nobid.debug" "$T/nobid" "$T/crc/prog"
cp "$T/nobid.debug" "$T/crc/nobid.debug"
a2l -e "$T/crc/prog" >"$T/o4"; same "debuglink with the right CRC, no build ID" "$T/o4"
# Same name, other contents (one byte more): must not be used.
{ cat "$T/nobid.debug"; printf '\0'; } >"$T/crc/nobid.debug"
a2l -e "$T/crc/prog" >"$T/o4b"
grep -q "sym_inline.c:[0-9]" "$T/o4b" && fail "a debuglink file with the wrong CRC was used"
echo "ok: debuglink with the wrong CRC refused"

# 5. Compressed debug sections: -gz in the binary, and a compressed separate debug file.
gcc -O2 -g -gz -o "$T/gz" "$src" || fail "cannot build with -gz"
readelf -S "$T/gz" | grep -A1 ' .debug_info' | grep -q 'C' || readelf -t "$T/gz" | grep -q COMPRESSED || fail "-gz did not compress"
callsites "$T/gz" | cmp -s - "$T/sites" || fail "-gz changed the code"
a2l -e "$T/gz" >"$T/o5"; same "-gz (SHF_COMPRESSED)" "$T/o5"
compare_symbolizers "$T/gz" "$T/sites"
mkdir -p "$T/zroot/.build-id/${bid:0:2}"
objcopy --compress-debug-sections=zlib "$T/root/.build-id/${bid:0:2}/${bid:2}.debug" "$T/zroot/.build-id/${bid:0:2}/${bid:2}.debug"
HEAPTAP_DEBUG_ROOT=$T/zroot a2l -e "$T/b1/prog" >"$T/o5b"; same "compressed separate debug file" "$T/o5b"

# 6. Through a profile: a stripped program's frames get their lines from --debug-dir (any command).
sp=$ROOT/tests/progs/sym_selfprof.c
gcc -O1 -g -fno-omit-frame-pointer -o "$T/sp" "$sp" -ldl || fail "cannot build $sp"
"$T/sp" "$T/sp.heap" || fail "sym_selfprof failed"
spbid=$(readelf -n "$T/sp" | awk '/Build ID/ {print $3}')
mkdir -p "$T/sproot/.build-id/${spbid:0:2}"
objcopy --only-keep-debug "$T/sp" "$T/sproot/.build-id/${spbid:0:2}/${spbid:2}.debug"
objcopy --strip-debug "$T/sp"
"$HT" collapsed --lines "$T/sp" "$T/sp.heap" >"$T/c-nodbg" 2>&1 || fail "collapsed failed"
grep -q "sym_selfprof.c:" "$T/c-nodbg" && fail "lines without the debug file"
"$HT" collapsed --lines --debug-dir="$T/sproot" "$T/sp" "$T/sp.heap" >"$T/c-dbg" 2>&1 || fail "collapsed --debug-dir failed"
grep -q "main $sp:[0-9]*;middle $sp:[0-9]*;leaf $sp:[0-9]* " "$T/c-dbg" || { cat "$T/c-dbg"; fail "collapsed --debug-dir: no lines"; }
echo "ok: collapsed --debug-dir on a profile of a stripped program"
