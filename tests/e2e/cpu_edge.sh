#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cpu_edge.sh - the CPU profiler where it must not get in the way:
#  1. SIGPROF already has the program's handler: heaptap_cpu_start returns -EBUSY (-16) twice,
#     stderr has exactly one line about it, and the program's handler is still installed;
#  2. fork: the child inherits no running profile (heaptap_cpu_write in the child: -ENOENT,
#     -2); the parent's profile has no child_work and keeps its own split;
#  3. a signal storm (cpu_hz:10000, the fastest) while four threads malloc and free as fast as
#     they can: no deadlock (the run ends well within its time limit) and the profile is
#     readable; samples that landed inside heaptap's malloc slow path are counted.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/cpu.sh"
ht_init
command -v go >/dev/null || ht_skip "go is not installed"
ht_need_prog cpu_split
export PPROF_TMPDIR=$TMP/pprof HOME=$TMP
d=$TMP/run
mkdir -p "$d"

# 1. another handler owns SIGPROF
(cd "$d" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=prof:false "$BIN" busy 1) >"$d/busy.out" 2>"$d/busy.err" ||
	{ cat "$d/busy.out" "$d/busy.err"; ht_fail "cpu_split busy exited with $?"; }
grep -qx 'start -16 -16' "$d/busy.out" || { cat "$d/busy.out"; ht_fail "heaptap_cpu_start did not answer -EBUSY twice"; }
grep -qx 'handler kept 1' "$d/busy.out" || ht_fail "the program's SIGPROF handler was replaced"
n=$(grep -c 'heaptap: cpu: signal 27 already has a handler' "$d/busy.err")
[ "$n" = 1 ] || { cat "$d/busy.err"; ht_fail "expected one line about the busy signal, got $n"; }

# 2. fork
(cd "$d" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=prof:false,cpu_hz:1000 "$BIN" fork 50000000 "$d/fork.pb") \
	>"$d/fork.out" 2>&1 || { cat "$d/fork.out"; ht_fail "cpu_split fork exited with $?"; }
grep -qx 'child_write -2' "$d/fork.out" || { cat "$d/fork.out"; ht_fail "the child inherited a CPU profile"; }
[ ! -e "$d/fork.pb.child" ] || ht_fail "the child wrote a profile"
cpu_gotool "$BIN" "$d/fork.pb" "$d/fork.txt" || ht_fail "go tool pprof cannot read the parent's profile"
! grep -q '^child_work ' "$d/fork.txt" || ht_fail "the parent's profile has the child's child_work"
cpu_share "$d/fork.txt" work_a "work_a work_b" 0.60 0.90 || ht_fail "fork: the parent's split is off"

# 3. signal storm while threads malloc
start=$(date +%s)
(cd "$d" && timeout 60 env LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=cpu_hz:10000,lg_prof_sample:10 \
	"$BIN" storm 200000000 "$d/storm.pb") >"$d/storm.out" 2>&1
rc=$?
[ $rc = 124 ] && ht_fail "the signal storm deadlocked (killed after 60 s)"
[ $rc = 0 ] || { cat "$d/storm.out"; ht_fail "cpu_split storm exited with $rc"; }
grep -qx 'storm ok write 0' "$d/storm.out" || { cat "$d/storm.out"; ht_fail "storm: no profile written"; }
cpu_gotool "$BIN" "$d/storm.pb" "$d/storm.txt" || ht_fail "go tool pprof cannot read the storm profile"
grep -q '^work_a ' "$d/storm.txt" || ht_fail "the storm profile lacks work_a"
grep -q '^storm_main ' "$d/storm.txt" || ht_fail "the storm profile lacks the malloc threads"
echo "storm took $(( $(date +%s) - start )) s"; grep 'heaptap: lost_in_heaptap' "$d/storm.txt.raw"
echo ok
