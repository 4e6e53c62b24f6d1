#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cpu_dumps.sh - the run CPU profile goes beside every heap dump: tests/progs/cpu_stats.c
# (mode dumps) runs with cpu_prof on and calls heaptap_dump twice (busy_main 1 unit before the
# first, 2 more before the second). Both dumps have a CPU profile with the heap dump's name +
# .cpu.pb (pprof) and + .cpu.prof (gperftools, cpu_format:pprof+gperf); go tool pprof -top and heaptap top
# read them, and the second holds more CPU time than the first (about 3:1; checked > 1.8x).
# With prof_max_dumps:1 the first dump's CPU files are deleted with it (retention), the
# second's stay. A prof_signal dump (background thread) has its CPU profile beside it too. Without cpu_prof no CPU file is written beside a dump.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/cpu.sh"
ht_init
ht_need_prog cpu_stats
export PPROF_TMPDIR=$TMP/pprof HOME=$TMP
d=$TMP/run
mkdir -p "$d/a" "$d/b" "$d/c"
conf=cpu_prof:true,cpu_hz:500,cpu_format:pprof+gperf,cpu_prefix:$d/exit
(cd "$d" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=$conf,prof_prefix:$d/a/h "$BIN" dumps 100000000) \
	>"$d/a.out" 2>&1 || { cat "$d/a.out"; ht_fail "cpu_stats dumps exited with $?"; }
[ "$(grep -c '^dump 0$' "$d/a.out")" = 2 ] || { cat "$d/a.out"; ht_fail "the two dumps did not succeed"; }
ls "$d/a"
prev=0
for k in 0 1; do
	base=$(ls "$d/a"/h.*.$k.m$k.heap 2>/dev/null) || ht_fail "heap dump $k is missing"
	base=${base%.heap}
	[ -s "$base.cpu.pb" ] || ht_fail "no CPU profile beside heap dump $k ($base.cpu.pb)"
	[ -s "$base.cpu.prof" ] || ht_fail "no gperftools CPU profile beside heap dump $k ($base.cpu.prof)"
	if command -v go >/dev/null; then
		cpu_gotool "$BIN" "$base.cpu.pb" "$d/go.$k" || ht_fail "go tool pprof cannot read $base.cpu.pb"
		grep -q '^busy_main ' "$d/go.$k" || { cat "$d/go.$k.raw"; ht_fail "go tool pprof: no busy_main in dump $k"; }
	fi
	for f in pb prof; do
		$HEAPTAP top "$BIN" "$base.cpu.$f" >"$d/top.$k.$f" 2>&1 || { cat "$d/top.$k.$f"; ht_fail "heaptap top cannot read $base.cpu.$f"; }
		grep -Eq '^Total: [0-9]+\.[0-9]{2} s$' "$d/top.$k.$f" || { head -3 "$d/top.$k.$f"; ht_fail "top of $base.cpu.$f is not in seconds"; }
	done
	t=$(awk '$6 == "busy_main" { sub(/s$/, "", $4); print $4 }' "$d/top.$k.pb")
	[ -n "$t" ] || { cat "$d/top.$k.pb"; ht_fail "heaptap top: no busy_main in dump $k"; }
	echo "dump $k: busy_main $t s"
	if [ $k = 1 ]; then
		awk -v a="$prev" -v b="$t" 'BEGIN { exit !(b > 1.8 * a && a > 0) }' ||
			ht_fail "the second CPU profile ($t s) does not hold more than the first ($prev s)"
	fi
	prev=$t
done

# retention: the oldest dump's CPU files go with it
(cd "$d" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=$conf,prof_prefix:$d/b/h,prof_max_dumps:1 "$BIN" dumps 1000000) \
	>"$d/b.out" 2>&1 || { cat "$d/b.out"; ht_fail "cpu_stats dumps (retention) exited with $?"; }
ls "$d/b"
! ls "$d/b"/h.*.0.m0.* >/dev/null 2>&1 || ht_fail "retention kept the first dump's files: $(ls "$d/b")"
ls "$d/b"/h.*.1.m1.cpu.pb >/dev/null 2>&1 || ht_fail "retention deleted the second dump's CPU profile"

# a signal dump (prof_signal, written by the background thread) gets its CPU profile too
mkdir -p "$d/s"
(cd "$d" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=$conf,prof_prefix:$d/s/h,prof_signal:USR2 "$BIN" signal 20000000 "$d/s" .s0.cpu.pb) \
	>"$d/s.out" 2>&1 || { cat "$d/s.out"; ht_fail "cpu_stats signal: no CPU profile beside the signal dump"; }
ls "$d/s"
ls "$d/s"/h.*.0.s0.heap >/dev/null 2>&1 || ht_fail "no heap dump for the signal"
$HEAPTAP top "$BIN" "$d/s"/h.*.0.s0.cpu.pb | grep -q ' busy_main$' || ht_fail "the signal dump's CPU profile lacks busy_main"

# no run CPU profile: nothing beside the dumps
(cd "$d" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=prof_prefix:$d/c/h "$BIN" dumps 1000000) \
	>"$d/c.out" 2>&1 || { cat "$d/c.out"; ht_fail "cpu_stats dumps (no cpu) exited with $?"; }
! ls "$d/c"/*.cpu.* >/dev/null 2>&1 || ht_fail "CPU files without cpu_prof: $(ls "$d/c")"
echo ok
