#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# collector_fork.sh - a forked child writes its own final dump under its own pid, complete and
# parseable (jeprof reads it, the memory map section is there), with the child's allocations
# (child_site 6 MiB exactly at lg_prof_sample:0); the parent's final dump has parent_site
# 4 MiB and nothing of the child's.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
command -v jeprof >/dev/null || ht_skip "jeprof is not installed"
ht_need_prog coll_fork
d=$TMP/run
ht_run "$d" lg_prof_sample:0 "$BIN" "$d/truth.txt" || ht_fail "coll_fork exited with $?"
ppid_=$(awk '$1=="parent"{print $2}' "$d/truth.txt")
cpid=$(awk '$1=="child"{print $2}' "$d/truth.txt")
[ -n "$ppid_" ] && [ -n "$cpid" ] || ht_fail "coll_fork wrote no pids"
ls -l "$d"
pd=$(ls "$d"/ht."$ppid_".*.f.heap 2>/dev/null)
cd_=$(ls "$d"/ht."$cpid".*.f.heap 2>/dev/null)
[ -n "$pd" ] || ht_fail "no final dump for the parent (pid $ppid_)"
[ -n "$cd_" ] || ht_fail "no final dump for the child (pid $cpid)"
for f in "$pd" "$cd_"; do
	grep -q '^MAPPED_LIBRARIES:' "$f" || ht_fail "$f has no MAPPED_LIBRARIES section (torn?)"
	grep -q "$BIN" "$f" || ht_fail "$f's memory map lacks the program $BIN"
done
ht_jeprof "$BIN" "$cd_" "$d/child.txt" || ht_fail "jeprof cannot read the child's dump"
ht_jeprof "$BIN" "$pd" "$d/parent.txt" || ht_fail "jeprof cannot read the parent's dump"
echo "== child (pid $cpid): $(basename "$cd_")"
echo "site child_site req=6291456 usable=6291456 col=flat objs=6x1048576" >"$d/child_truth.txt"
$ACC_PY exact --kind jeprof --mode "$(ht_mode)" "$d/child_truth.txt" "$d/child.txt" || exit 1
echo "== parent (pid $ppid_): $(basename "$pd")"
{ grep '^site' "$d/truth.txt"; echo "site child_site req=0 usable=0 col=flat objs=0x0"; } >"$d/parent_truth.txt"
$ACC_PY exact --kind jeprof --mode "$(ht_mode)" "$d/parent_truth.txt" "$d/parent.txt" || exit 1
