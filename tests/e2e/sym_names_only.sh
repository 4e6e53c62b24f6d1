#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sym_names_only.sh - `top` and `collapsed` at function granularity symbolize names only (no
# line tables decoded, sym_options.no_lines): their output must be byte-identical to the same
# report with --focus=. (a regex that keeps every stack but matches file:line too, so it
# symbolizes with lines), inline frames included; and --lines must still print the marked
# source lines. The program is tests/progs/sym_inline.c at -O2 (two-level always-inline helper).
. "$(dirname "$0")/sym_common.inc"
: "${HEAPTAP_LIB:=$ROOT/build/libheaptap.so}"
[ -f "$HEAPTAP_LIB" ] || fail "no collector at $HEAPTAP_LIB"
src=$ROOT/tests/progs/sym_inline.c
gcc -O2 -g -fno-omit-frame-pointer -o "$T/inl" "$src" || fail "cannot build $src"
mkdir -p "$T/d"
HEAPTAP_CONF="lg_prof_sample:0,prof_accum:true,prof_prefix:$T/d/p" LD_PRELOAD=$HEAPTAP_LIB "$T/inl" >/dev/null ||
	fail "the program failed under the collector"
prof=$(ls "$T"/d/p.*.f*.heap 2>/dev/null | head -n 1)
[ -n "$prof" ] || fail "the collector wrote no final dump"

for cmd in top collapsed; do
	"$HT" "$cmd" --sample_index=alloc_space "$T/inl" "$prof" >"$T/$cmd.names" 2>"$T/err" || { cat "$T/err"; fail "$cmd failed"; }
	"$HT" "$cmd" --sample_index=alloc_space --focus=. "$T/inl" "$prof" >"$T/$cmd.lines" 2>"$T/err" || { cat "$T/err"; fail "$cmd --focus=. failed"; }
	cmp -s "$T/$cmd.names" "$T/$cmd.lines" || { diff "$T/$cmd.lines" "$T/$cmd.names"; fail "$cmd: names-only output differs"; }
	echo "ok[$cmd names-only = with lines]"
done
# Both malloc sites are inline chains raw <- grab <- first_site / second_site.
grep -q 'raw (inline)' "$T/top.names" && grep -q 'first_site' "$T/top.names" && grep -q 'second_site' "$T/top.names" ||
	{ cat "$T/top.names"; fail "top lacks the inline chain's functions"; }
grep -q 'first_site;grab\[inline\];raw\[inline\] ' "$T/collapsed.names" || { cat "$T/collapsed.names"; fail "collapsed lacks grab;raw"; }
echo "ok[inline chains named]"
raw=$(grep -n MARK_RAW "$src" | head -n 1 | cut -d: -f1)
"$HT" top --sample_index=alloc_space --lines "$T/inl" "$prof" >"$T/top.lines" 2>"$T/err" || { cat "$T/err"; fail "top --lines failed"; }
grep -q "sym_inline.c:$raw" "$T/top.lines" || { cat "$T/top.lines"; fail "top --lines lacks sym_inline.c:$raw"; }
echo "ok[--lines still has file:line]"
exit 0
