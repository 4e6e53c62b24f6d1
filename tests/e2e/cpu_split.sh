#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cpu_split.sh - the CPU profiler's numbers against a known split (build/progs/cpu_split, C API,
# cpu_hz:1000): in one thread work_a does 3 units and work_b 1; a side thread created before
# the profile started does 2 (work_side), a thread created after it started 2 (work_late), 10
# short-lived threads 2 together (work_pool). go tool pprof reads the pprof file and jeprof the
# gperftools file written from the same run; each shows a:b near 3:1 and the threads' shares
# near their work, within wide sampling tolerances. The short threads lose up to one
# scheduler tick each at exit (the kernel checks CPU timers on ticks): their band is wider.
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
for f in pb prof; do
	(cd "$d" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=cpu_hz:1000,prof:false \
		"$BIN" api 100000000 "$d/split.$f") >"$d/out.$f" 2>&1 || { cat "$d/out.$f"; ht_fail "cpu_split exited with $?"; }
	grep -q '^stop 0 write 0$' "$d/out.$f" || { cat "$d/out.$f"; ht_fail "the C API failed"; }
done
head -c 40 "$d/split.prof" | od -An -tx8 | head -1 | grep -q '0000000000000000 0000000000000003' ||
	ht_fail "split.prof does not start with gperftools' header words 0, 3"

cpu_gotool "$BIN" "$d/split.pb" "$d/go.txt" || ht_fail "go tool pprof cannot read the pprof profile"
cpu_jeprof "$BIN" "$d/split.prof" "$d/je.txt" || ht_fail "jeprof cannot read the gperftools profile"
grep -q 'Type: cpu' "$d/go.txt.raw" || ht_fail "go tool pprof does not see a CPU profile"
grep -q 'heaptap: timer=thread' "$d/go.txt.raw" || ht_fail "the profile does not say its timer"
grep -q 'heaptap: lost_buffer_full=' "$d/go.txt.raw" || ht_fail "the profile does not count lost samples"
rc=0
all="work_a work_b work_side work_late work_pool"
for t in go je; do
	f=$d/$t.txt
	cpu_share "$f" work_a "work_a work_b" 0.65 0.85 || rc=1
	cpu_share "$f" work_side "$all" 0.17 0.28 || rc=1
	cpu_share "$f" work_late "$all" 0.17 0.28 || rc=1
	cpu_share "$f" work_pool "$all" 0.12 0.28 || rc=1
	cpu_share "$f" "work_a work_b" "$all" 0.30 0.50 || rc=1
done
[ $rc = 0 ] || { cat "$d/go.txt.raw"; ht_fail "a share is off"; }
echo "ok"
