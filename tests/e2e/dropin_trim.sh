#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# dropin_trim.sh - the allocator's machinery is trimmed in every command, whatever its names:
# jemalloc's private functions with tikv-jemallocator's _rjem_ prefix or a plain je_ build's,
# Rust's global-allocator shims and operator new. build/progs/dropin_allocfns has functions of
# those names; a synthetic jemalloc-style heap_v2 profile of it (each stack led by
# _rjem_je_prof_backtrace or je_prof_tctx_create, as jemalloc's own dumps are) and a real
# heaptap dump of it must name its app_* functions as the sites (flat column, folded leaves,
# graph and flame frames, pprof export, diff, report, run), and --keep-allocator keeps them.
. "$(dirname "$0")/lib/test.sh"
BIN=$ROOT/build/progs/dropin_allocfns
[ -x "$BIN" ] || { echo "FAIL: $BIN is not built (make progs)"; exit 1; }
BIN=$(readlink -f "$BIN")

# Synthetic jemalloc dump: addresses 2 bytes into each function (return addresses) of the binary
# mapped at BASE. Stacks leaf first, as jemalloc writes them.
BASE=0x555555554000
addr() { printf '0x%x' $((BASE + 0x$(nm "$BIN" | awk -v s="$1" '$3 == s { print $1 }') + 2)); }
stack() { local s="@"; for f in "$@"; do s="$s $(addr "$f")"; done; echo "$s"; }
BT=_rjem_je_prof_backtrace MD=_rjem_je_malloc_default
GA='_ZN80_$LT$tikv_jemallocator..Jemalloc$u20$as$u20$core..alloc..global..GlobalAlloc$GT$5alloc17hfedcba9876543210E'
FG=_ZN5alloc7raw_vec11finish_grow17h0123456789abcdefE
RR=_ZN5alloc5alloc7realloc17h00112233445566aaE
{
	echo "heap_v2/1"
	echo "  t*: 16: 6815744 [0: 0]"
	stack $BT $MD _rjem_malloc "$GA" __rust_alloc $FG app_build_index main
	echo "  t*: 3: 3145728 [0: 0]"
	stack je_prof_tctx_create imalloc __rdl_alloc __rust_alloc_zeroed app_cache_fill main
	echo "  t*: 4: 2097152 [0: 0]"
	stack $BT $MD _Znwm app_new_session main
	echo "  t*: 8: 1048576 [0: 0]"
	stack __rg_alloc __rust_realloc $RR app_grow main
	echo "  t*: 1: 524288 [0: 0]"
	echo
	echo "MAPPED_LIBRARIES:"
	printf '%x-%x r-xp 00000000 00:00 0 %s\n' $((BASE)) $((BASE + 0x100000)) "$BIN"
} >"$TMP/je.heap"
grep -q '^@ 0x' "$TMP/je.heap" || { echo "FAIL: could not build the synthetic profile"; cat "$TMP/je.heap"; exit 1; }

want="3145728 app_build_index
2097152 app_cache_fill
1048576 app_new_session
524288 app_grow"
# flat column of top: the four app_* functions, nothing of the allocator
flat() { "$HEAPTAP" top --show_bytes "$@" 2>/dev/null | awk 'NR > 1 && $1 != 0 && $1 != "Memory:" { print $1, $6 }'; }
check "top flat (jemalloc-style dump)" "$want" "$(flat "$BIN" "$TMP/je.heap")"
kept=$("$HEAPTAP" top --show_bytes --keep-allocator "$BIN" "$TMP/je.heap" 2>/dev/null | awk 'NR == 2 { print $1, $6 }')
check "--keep-allocator keeps the jemalloc leaf" "4194304 _rjem_je_prof_backtrace" "$kept"

# folded leaves
leaves=$("$HEAPTAP" collapsed "$BIN" "$TMP/je.heap" 2>/dev/null | awk '{ n = split($1, f, ";"); print $2, f[n] }' | sort -k1,1nr)
check "collapsed leaves" "$want" "$leaves"
# graph, flame graph, pprof export: no allocator name anywhere
bad_names='_rjem_|je_prof|imalloc|__rust_alloc|__rdl_alloc|__rg_alloc|__rust_realloc|GlobalAlloc|finish_grow|alloc::alloc|operator new'
"$HEAPTAP" callgraph --nodefraction=0 "$BIN" "$TMP/je.heap" >"$TMP/g.dot" 2>/dev/null
grep -Eq "$bad_names" "$TMP/g.dot" && { echo "FAIL: allocator frames in the call graph"; grep -E "$bad_names" "$TMP/g.dot"; fail=1; }
grep -q 'app_grow' "$TMP/g.dot" || { echo "FAIL: app_grow missing from the call graph"; fail=1; }
"$HEAPTAP" flame "$BIN" "$TMP/je.heap" >"$TMP/f.svg" 2>/dev/null
grep -Eq "$bad_names" "$TMP/f.svg" && { echo "FAIL: allocator frames in the flame graph"; fail=1; }
grep -q '>app_build_index<\|app_build_index (' "$TMP/f.svg" || { echo "FAIL: app_build_index missing from the flame graph"; fail=1; }
"$HEAPTAP" pprof -o "$TMP/p.pb.gz" "$BIN" "$TMP/je.heap" 2>/dev/null || { echo "FAIL: pprof export"; fail=1; }
check "pprof export, read back" "$want" "$(flat "$TMP/p.pb.gz")"
# diff against a base without app_grow: the one changed row is app_grow
head -n 2 "$TMP/je.heap" | sed 's/16: 6815744/15: 6291456/' >"$TMP/base.heap"
sed -n '3,8p' "$TMP/je.heap" >>"$TMP/base.heap"
sed -n '/^$/,$p' "$TMP/je.heap" >>"$TMP/base.heap"
d=$("$HEAPTAP" diff --show_bytes --base "$TMP/base.heap" "$BIN" "$TMP/je.heap" 2>/dev/null | awk 'NR > 2 { print $NF }')
check "diff names the program's function" "app_grow" "$d"
"$HEAPTAP" report -o "$TMP/r.html" "$BIN" "$TMP/je.heap" 2>/dev/null || { echo "FAIL: report exited $?"; fail=1; }
grep -q 'app_build_index' "$TMP/r.html" || { echo "FAIL: app_build_index missing from the report"; fail=1; }
grep -Eq '_rjem_je_prof_backtrace|je_prof_tctx_create|__rdl_alloc' "$TMP/r.html" && { echo "FAIL: allocator frames in the report"; fail=1; }

# A real run under the collector (stacks start at the caller of malloc: the shims lead them).
if [ -f "${HEAPTAP_LIB:-$ROOT/build/libheaptap.so}" ]; then
	export HEAPTAP_LIB=${HEAPTAP_LIB:-$ROOT/build/libheaptap.so}
	(cd "$TMP" && "$HEAPTAP" run --out "$TMP/out" --conf lg_prof_sample:0 -- "$BIN") >"$TMP/run.txt" 2>"$TMP/run.err" || { echo "FAIL: run exited $?"; cat "$TMP/run.err"; fail=1; }
	sites=$(sed -n '/allocation site/,/^$/p' "$TMP/run.txt" | awk 'NR > 1 && NF { print $(NF-1) }' | head -n 4)
	check "run's sites" "app_build_index
app_cache_fill
app_new_session
app_grow" "$sites"
	check "top of the collector's dump" "$want" "$(flat "$TMP"/out/heaptap.*.f.heap)"
	grep -Eq "$bad_names" "$TMP/run.txt" && { echo "FAIL: allocator frames in run's report"; fail=1; }
	grep -Eq ';(_rjem_je_malloc_default|je_prof_tctx_create|__rg_alloc) ' "$TMP"/out/heaptap.*.f.collapsed && { echo "FAIL: allocator leaves in run's folded stacks"; fail=1; }
fi
[ $fail = 0 ] && echo "ok: allocator machinery trimmed everywhere"
exit $fail
