#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_top_vs_jeprof.sh - `heaptap top` must print what `jeprof --text` prints on the same input:
# the same "Total:" line and the same significant rows (flat >= 1%), byte for byte, in the
# inuse_space, inuse_objects, --show_bytes and --lines views, plus identical rows for every
# function of the demo program. Inputs: a dump written by jemalloc's own profiler
# (lg_prof_sample:0, so every allocation is in it) and, when the collector is built, a
# heaptap dump of the same program.
. "$(dirname "$0")/lib/test.sh"
HEAPTAP_LIB=${HEAPTAP_LIB:-$ROOT/build/libheaptap.so}
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
BIN=$ROOT/build/examples/leaky
command -v jeprof >/dev/null || { echo "skip: jeprof is not installed"; exit 77; }
[ -f "$JE" ] || { echo "skip: $JE is not installed"; exit 77; }
[ -x "$BIN" ] || { echo "FAIL: $BIN is not built (make progs)"; exit 1; }
[ -x "$HEAPTAP" ] || { echo "FAIL: $HEAPTAP is not built"; exit 1; }

# compare LABEL DUMP [OPTIONS...]
compare() {
	local label=$1 dump=$2; shift 2
	jeprof --text "$@" "$BIN" "$dump" >"$TMP/j.txt" 2>"$TMP/j.err" || { echo "FAIL[$label]: jeprof failed"; cat "$TMP/j.err"; fail=1; return; }
	"$HEAPTAP" top "$@" "$BIN" "$dump" >"$TMP/h.txt" 2>"$TMP/h.err" || { echo "FAIL[$label]: heaptap top failed"; cat "$TMP/h.err"; fail=1; return; }
	local jt ht
	jt=$(head -n 1 "$TMP/j.txt"); ht=$(head -n 1 "$TMP/h.txt")
	if [ "$jt" != "$ht" ]; then
		echo "FAIL[$label]: totals differ: jeprof '$jt', heaptap '$ht'"; fail=1
	fi
	case $jt in "Total: "*) ;; *) echo "FAIL[$label]: no Total line from jeprof: '$jt'"; fail=1 ;; esac
	# The significant rows: jeprof's rows whose flat% is at least 1.0.
	local k
	k=$(awk 'NR > 1 { p = $2; sub(/%/, "", p); if (p + 0 >= 1.0) n++ } END { print n + 0 }' "$TMP/j.txt")
	if [ "$k" -lt 1 ]; then
		echo "FAIL[$label]: expected a significant row from jeprof, got none"; cat "$TMP/j.txt"; fail=1; return
	fi
	[ "$k" -lt 2 ] && k=2
	# Source paths: addr2line joins the compile directory, heaptap may not; compare base names.
	local norm='s| [^ ]*/\([^/ ]*:[0-9]\)| \1|'
	if ! diff <(sed -n "2,$((k + 1))p" "$TMP/j.txt" | sed "$norm") <(sed -n "2,$((k + 1))p" "$TMP/h.txt" | sed "$norm") >"$TMP/d.txt"; then
		echo "FAIL[$label]: the top $k rows differ (< jeprof, > heaptap):"; cat "$TMP/d.txt"; fail=1
	else
		echo "ok[$label]: $jt, top $k rows equal"
	fi
}

# same_rows LABEL DUMP NAME...: the rows of these names are identical (any position).
same_rows() {
	local label=$1 dump=$2; shift 2
	jeprof --text "$BIN" "$dump" >"$TMP/j.txt" 2>/dev/null
	"$HEAPTAP" top "$BIN" "$dump" >"$TMP/h.txt" 2>/dev/null
	for name in "$@"; do
		local jr hr
		jr=$(grep -E " $name\$" "$TMP/j.txt" | awk '{ $3 = ""; print }')
		hr=$(grep -E " $name\$" "$TMP/h.txt" | awk '{ $3 = ""; print }')
		if [ -z "$jr" ] || [ "$jr" != "$hr" ]; then
			echo "FAIL[$label]: row of $name: jeprof '$jr', heaptap '$hr'"; fail=1
		fi
	done
}

# 1. jemalloc's own profiler, every allocation sampled.
mkdir -p "$TMP/je"
(cd "$TMP/je" && LD_PRELOAD=$JE MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0 "$BIN" >/dev/null) || { echo "FAIL: leaky under jemalloc failed"; exit 1; }
dump=$(ls "$TMP"/je/jeprof.*.f.heap 2>/dev/null | head -n 1)
[ -n "$dump" ] || { echo "FAIL: jemalloc wrote no final dump"; ls -l "$TMP/je"; exit 1; }
compare je-inuse_space "$dump"
compare je-inuse_objects "$dump" --inuse_objects
compare je-show_bytes "$dump" --show_bytes
compare je-lines "$dump" --lines
compare je-addresses "$dump" --addresses
compare je-focus "$dump" --focus=handle_request   # Total before focus, percentages after
compare je-ignore "$dump" --ignore='^open_session$|^_dl_init$'
compare je-files "$dump" --files
same_rows je-functions "$dump" cache_fill open_session handle_request main
# The demo's numbers are known exactly: 8 x 1 MiB cached, 60000 x 128 B leaked.
grep -qE '^ +8388608 +[0-9.]+% +[0-9.]+% +8388608 +[0-9.]+% cache_fill$' <("$HEAPTAP" top --show_bytes "$BIN" "$dump") ||
	{ echo "FAIL: cache_fill is not exactly 8388608 bytes"; fail=1; }
grep -qE '^ +60000 +[0-9.]+% +[0-9.]+% +60000 +[0-9.]+% open_session$' <("$HEAPTAP" top --inuse_objects "$BIN" "$dump") ||
	{ echo "FAIL: open_session is not exactly 60000 objects"; fail=1; }

# With prof_accum the dump also carries what was allocated in total (the freed churn included).
mkdir -p "$TMP/acc"
(cd "$TMP/acc" && LD_PRELOAD=$JE MALLOC_CONF=prof:true,prof_final:true,prof_accum:true,lg_prof_sample:0 "$BIN" >/dev/null) || { echo "FAIL: leaky under jemalloc (accum) failed"; exit 1; }
adump=$(ls "$TMP"/acc/jeprof.*.f.heap 2>/dev/null | head -n 1)
compare je-alloc_space "$adump" --alloc_space
compare je-alloc_objects "$adump" --alloc_objects
# --cum puts libc's entry points first, whose alias names differ between addr2line and heaptap's
# symbolizer; compare the program's own rows (in order, with every column).
jeprof --text --cum "$BIN" "$adump" 2>/dev/null | grep -E ' (main|handle_request|cache_fill|open_session)$' >"$TMP/jc.txt"
"$HEAPTAP" top --cum "$BIN" "$adump" 2>/dev/null | grep -E ' (main|handle_request|cache_fill|open_session)$' >"$TMP/hc.txt"
if [ "$(wc -l <"$TMP/jc.txt")" = 4 ] && diff "$TMP/jc.txt" "$TMP/hc.txt" >"$TMP/d.txt"; then
	echo "ok[je-cum]: the program's 4 rows equal"
else
	echo "FAIL[je-cum] (< jeprof, > heaptap):"; cat "$TMP/d.txt" "$TMP/jc.txt"; fail=1
fi

# 2. heaptap's collector, when it is built and writes a dump.
if [ -f "$HEAPTAP_LIB" ]; then
	mkdir -p "$TMP/ht"
	(cd "$TMP/ht" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF="prof_prefix:$TMP/ht/ht,lg_prof_sample:12" "$BIN" >/dev/null 2>&1)
	hdump=$(ls "$TMP"/ht/ht.*.f.heap 2>/dev/null | head -n 1)
	if [ -n "$hdump" ]; then
		compare ht-inuse_space "$hdump"
		compare ht-inuse_objects "$hdump" --inuse_objects
	else
		echo "note: the collector wrote no final dump; heaptap-dump comparison not run"
	fi
else
	echo "note: $HEAPTAP_LIB not built; heaptap-dump comparison not run"
fi
exit $fail
