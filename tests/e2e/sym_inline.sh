#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sym_inline.sh - inline frames: a two-level always-inline helper called from two functions,
# built at -O2 by gcc (DWARF 5 and 4) and clang (DWARF 5: addrx, rnglistx forms). Each malloc
# call must resolve to raw <- grab <- first_site / second_site with the marked lines, and every
# call site of the binary must match addr2line or llvm-symbolizer.
. "$(dirname "$0")/sym_common.inc"
src=$ROOT/tests/progs/sym_inline.c
line() { grep -n "$1" "$src" | head -n 1 | cut -d: -f1; }
raw=$(line MARK_RAW) grab=$(line MARK_GRAB) first=$(line MARK_FIRST) second=$(line MARK_SECOND)

check() { # compiler flags...
	"$@" -o "$T/inl" "$src" || fail "cannot build $src with $*"
	echo "== $*"
	objdump -d --no-show-raw-insn "$T/inl" | awk '
		/^ *[0-9a-f]+:\t/ { a = $1; sub(":", "", a); if (pending) print a; pending = ($0 ~ /call.*<malloc@plt>/); next }
		{ pending = 0 }' | while read -r a; do printf '0x%x\n' $((0x$a - 1)); done >"$T/sites"
	[ "$(wc -l <"$T/sites")" -eq 2 ] || fail "expected 2 malloc call sites, found $(wc -l <"$T/sites")"

	"$HT" addr2line -f -i -e "$T/inl" <"$T/sites" >"$T/out" || fail "heaptap addr2line failed"
	cat "$T/out"
	expect() { # outer function, its line
		printf 'raw\n%s:%s\ngrab\n%s:%s\n%s\n%s:%s\n' "$src" "$raw" "$src" "$grab" "$1" "$src" "$2"
	}
	{ expect first_site "$first"; expect second_site "$second"; } >"$T/want"
	# The two sites may come in either order in the binary.
	{ expect second_site "$second"; expect first_site "$first"; } >"$T/want2"
	cmp -s "$T/out" "$T/want" || cmp -s "$T/out" "$T/want2" || { diff "$T/want" "$T/out"; fail "inline chains differ"; }

	# Without -i only the innermost frame is printed, as binutils addr2line does.
	"$HT" addr2line -f -e "$T/inl" "$(head -n 1 "$T/sites")" >"$T/one"
	grep -qx raw "$T/one" || fail "without -i the innermost frame should be shown (like addr2line)"

	callsites "$T/inl" >"$T/all"
	compare_symbolizers "$T/inl" "$T/all"
}
check gcc -O2 -g
check gcc -O2 -gdwarf-4
if command -v clang >/dev/null; then check clang -O2 -g; fi

# The command's errors: exit 1 naming the missing file or the bad input line, 2 for usage.
"$HT" addr2line -e "$T/nonexistent" 0x10 2>"$T/err"; [ $? = 1 ] || fail "missing file: want exit 1"
grep -q "^heaptap: addr2line: $T/nonexistent: No such file or directory\$" "$T/err" || fail "missing file message: $(cat "$T/err")"
"$HT" addr2line 0x10 2>/dev/null; [ $? = 2 ] || fail "no -e: want exit 2"
"$HT" addr2line -e "$T/inl" zz 2>/dev/null; [ $? = 2 ] || fail "bad address argument: want exit 2"
printf '0x10\nnot-hex\n' | "$HT" addr2line -e "$T/inl" 2>"$T/err" >/dev/null; [ $? = 1 ] || fail "bad stdin line: want exit 1"
grep -q '<stdin>:2: not a hex address' "$T/err" || fail "bad stdin line message: $(cat "$T/err")"
echo "ok: addr2line error handling"
