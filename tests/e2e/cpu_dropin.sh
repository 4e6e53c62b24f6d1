#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cpu_dropin.sh - the CPU profiler started from the environment, no code change:
#  1. gperftools' CPUPROFILE=FILE (with CPUPROFILE_FREQUENCY=500) writes FILE in gperftools'
#     format at exit; jeprof reads it with the 3:1 split of work_a and work_b, and its header
#     carries the period 2000 µs;
#  2. HEAPTAP_CONF=cpu_prof:true,cpu_format:pprof+gperf writes <prof_prefix>.<pid>.cpu.pb and
#     .cpu.prof; go tool pprof reads the first as a CPU profile with period 10 ms (100 Hz);
#  3. cpu_timer:process (the setitimer fallback) says so in the profile (timer=setitimer) and
#     still has the split;
#  4. CPUPROFILE is ignored under secure execution: covered by sec tests of options (AT_SECURE
#     turns every variable off); here: with CPUPROFILE set and libprofiler.so preloaded,
#     heaptap leaves CPUPROFILE to gperftools and says so in one line.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/cpu.sh"
ht_init
command -v go >/dev/null || ht_skip "go is not installed"
command -v jeprof >/dev/null || ht_skip "jeprof is not installed"
ht_need_prog cpu_split
export PPROF_TMPDIR=$TMP/pprof HOME=$TMP
d=$TMP/run
mkdir -p "$d"

# 1. CPUPROFILE
(cd "$d" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=prof:false CPUPROFILE=$d/gp.prof CPUPROFILE_FREQUENCY=500 \
	"$BIN" env 100000000) >"$d/env.out" 2>&1 || { cat "$d/env.out"; ht_fail "cpu_split env exited with $?"; }
[ -s "$d/gp.prof" ] || { cat "$d/env.out"; ht_fail "CPUPROFILE=$d/gp.prof was not written"; }
period=$(od -An -tu8 -j24 -N8 "$d/gp.prof" | tr -d ' ')
[ "$period" = 2000 ] || ht_fail "gperftools header period is '$period' µs, expected 2000 (CPUPROFILE_FREQUENCY=500)"
cpu_jeprof "$BIN" "$d/gp.prof" "$d/je.txt" || ht_fail "jeprof cannot read CPUPROFILE's file"
cpu_share "$d/je.txt" work_a "work_a work_b" 0.65 0.85 || ht_fail "CPUPROFILE: split is off"

# 2. cpu_prof
(cd "$d" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=prof:false,prof_prefix:$d/hp,cpu_prof:true,cpu_format:pprof+gperf,cpu_hz:100 \
	"$BIN" env 100000000) >"$d/conf.out" 2>&1 || { cat "$d/conf.out"; ht_fail "cpu_split (cpu_prof) exited with $?"; }
pb=$(ls "$d"/hp.*.cpu.pb 2>/dev/null) && gp=$(ls "$d"/hp.*.cpu.prof 2>/dev/null) ||
	{ ls -l "$d"; ht_fail "cpu_prof:true wrote no <prefix>.<pid>.cpu.pb and .cpu.prof"; }
cpu_gotool "$BIN" "$pb" "$d/go.txt" || ht_fail "go tool pprof cannot read $pb"
grep -q 'Type: cpu' "$d/go.txt.raw" || ht_fail "$pb is not a CPU profile for go tool pprof"
go tool pprof -raw "$pb" 2>/dev/null | grep -q '^Period: 10000000$' || ht_fail "$pb's period is not 10 ms"
cpu_jeprof "$BIN" "$gp" "$d/je2.txt" || ht_fail "jeprof cannot read $gp"
cpu_share "$d/go.txt" work_a "work_a work_b" 0.60 0.90 || ht_fail "cpu_prof: split is off"

# 3. setitimer fallback
(cd "$d" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=prof:false,cpu_timer:process,cpu_hz:500 \
	"$BIN" api 100000000 "$d/it.pb") >"$d/it.out" 2>&1 || { cat "$d/it.out"; ht_fail "cpu_split (setitimer) exited with $?"; }
cpu_gotool "$BIN" "$d/it.pb" "$d/it.txt" || ht_fail "go tool pprof cannot read the setitimer profile"
grep -q 'heaptap: timer=setitimer' "$d/it.txt.raw" || ht_fail "the setitimer profile does not say so"
cpu_share "$d/it.txt" work_a "work_a work_b" 0.60 0.90 || ht_fail "setitimer: split is off"

# 4. gperftools' own profiler in the process keeps CPUPROFILE
LP=/usr/lib/x86_64-linux-gnu/libprofiler.so.0
if [ -f "$LP" ]; then
	(cd "$d" && LD_PRELOAD="$HEAPTAP_LIB $LP" HEAPTAP_CONF=prof:false CPUPROFILE=$d/theirs.prof \
		"$BIN" env 20000000) >"$d/theirs.out" 2>&1 || { cat "$d/theirs.out"; ht_fail "cpu_split with libprofiler exited with $?"; }
	n=$(grep -c 'CPUPROFILE is left to gperftools' "$d/theirs.out")
	[ "$n" = 1 ] || { cat "$d/theirs.out"; ht_fail "expected one line leaving CPUPROFILE to gperftools, got $n"; }
fi
echo ok
