#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_merge.sh - `heaptap merge A B -o OUT` sums profiles: the merged heap_v2 file gives exactly
# the summed per-function values in `heaptap top` and in stock `jeprof --text`, a jemalloc dump
# merged with itself doubles jeprof's total and keeps its rows, and -o X.pb.gz writes a
# profile `go tool pprof` reads with the same total.
. "$(dirname "$0")/lib/test.sh"
. "$(dirname "$0")/lib/cli_synth.sh"
cli_synth "$TMP"
"$HEAPTAP" merge "$TMP/cli_old.raw" "$TMP/cli_new.raw" -o "$TMP/m.heap" || { echo "FAIL: merge exited $?"; exit 1; }
head -n 1 "$TMP/m.heap" | grep -qx 'heap_v2/1' || { echo "FAIL: not heap_v2/1: $(head -n 1 "$TMP/m.heap")"; fail=1; }
# Symbols do not survive heap_v2, so compare by address: leak 1000+3000, hog 2x1048576, gone 5000, new_site 2048.
out=$("$HEAPTAP" top --show_bytes --no-symbolize "$TMP/m.heap")
want="Total: 2108200 B
 2097152  99.5%  99.5%  2097152  99.5% 0x0000000000001100
    5000   0.2%  99.7%     5000   0.2% 0x0000000000001200
    4000   0.2%  99.9%     4000   0.2% 0x0000000000001000
    2048   0.1% 100.0%     2048   0.1% 0x0000000000001300
       0   0.0% 100.0%     4000   0.2% 0x0000000000002000
       0   0.0% 100.0%  2108200 100.0% 0x0000000000003000"
if [ "$out" != "$want" ]; then echo "FAIL: merged top:"; diff <(echo "$want") <(echo "$out"); fail=1; else echo "ok: merged values"; fi
objs=$("$HEAPTAP" top --inuse_objects --no-symbolize "$TMP/m.heap" | head -n 1)
[ "$objs" = "Total: 49 objects" ] || { echo "FAIL: merged objects '$objs'"; fail=1; }

JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
BIN=$ROOT/build/examples/leaky
if command -v jeprof >/dev/null && [ -f "$JE" ] && [ -x "$BIN" ]; then
	j=$(jeprof --text --show_bytes "$BIN" "$TMP/m.heap" 2>/dev/null | head -n 1)
	[ "$j" = "Total: 2108200 B" ] || { echo "FAIL: jeprof reads the merged file as '$j'"; fail=1; }
	(cd "$TMP" && LD_PRELOAD=$JE MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0 "$BIN" >/dev/null)
	dump=$(ls "$TMP"/jeprof.*.f.heap | head -n 1)
	"$HEAPTAP" merge "$dump" "$dump" -o "$TMP/twice.heap" || { echo "FAIL: merge of a jemalloc dump"; fail=1; }
	one=$(jeprof --text --show_bytes "$BIN" "$dump" 2>/dev/null | awk 'NR == 1 { print $2 } / cache_fill$/ { print $1 } / open_session$/ { print $1 }')
	two=$(jeprof --text --show_bytes "$BIN" "$TMP/twice.heap" 2>/dev/null | awk 'NR == 1 { print $2 } / cache_fill$/ { print $1 } / open_session$/ { print $1 }')
	dbl=$(echo "$one" | awk '{ print $1 * 2 }')
	if [ -z "$one" ] || [ "$two" != "$dbl" ]; then
		echo "FAIL: jeprof on the doubled dump: '$(echo $two)', want '$(echo $dbl)'"; fail=1
	else
		echo "ok: jemalloc dump merged with itself: $(echo $two)"
	fi
	h=$("$HEAPTAP" top --show_bytes "$BIN" "$TMP/twice.heap" | head -n 3)
	jj=$(jeprof --text --show_bytes "$BIN" "$TMP/twice.heap" 2>/dev/null | head -n 3)
	[ "$h" = "$jj" ] || { echo "FAIL: heaptap top vs jeprof on the merged dump:"; diff <(echo "$jj") <(echo "$h"); fail=1; }
fi

if PATH="/usr/lib/go/bin:$PATH" command -v go >/dev/null; then
	"$HEAPTAP" merge "$TMP/cli_old.raw" "$TMP/cli_new.raw" -o "$TMP/m.pb.gz" || { echo "FAIL: merge to pb.gz"; fail=1; }
	g=$(PATH="/usr/lib/go/bin:$PATH" go tool pprof -raw -sample_index=inuse_space "$TMP/m.pb.gz" 2>/dev/null | awk '/^Samples:/ { on = 1; next } on && /^ *[0-9]+ +[0-9]+: / { s += $2 } END { print s + 0 }')
	[ "$g" = 2108200 ] || { echo "FAIL: go tool pprof sums the merged pb.gz to '$g', want 2108200"; fail=1; }
	[ "$g" = 2108200 ] && echo "ok: go tool pprof total $g"
else
	echo "note: go not installed; pprof output not checked"
fi
exit $fail
