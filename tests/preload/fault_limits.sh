#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# fault_limits.sh - the collector under resource exhaustion: no file descriptor left at dump
# time, tables far too small (prof_max_stacks:16, prof_max_live:64), a tight RLIMIT_AS. In each
# case the host prints and exits as it does unprofiled, and the statistics say what was dropped.
. "$(dirname "$0")/../e2e/lib/host.sh"
prog=$ROOT/build/progs/stress_faults
[ -x "$prog" ] || host_fail "$prog not built (make progs)"
stat_of() { # TAG python-expression over the stats object s
	grep '^STATS ' "$HOST_TMP/$1/err" | tail -n 1 | cut -c7- |
		python3 -c "import json,sys; s=json.load(sys.stdin); print($2)"
}

# 1. No file descriptor left: the manual dump fails with an error, is counted, the host goes on.
host_run fds.plain - bash -c "ulimit -n 64; exec $prog fds"
host_run fds "" bash -c "ulimit -n 64; exec $prog fds"
cmp -s "$HOST_TMP/fds.plain/out" "$HOST_TMP/fds/out" || host_fail "fds: output differs"
[ "$(cat "$HOST_TMP/fds/rc")" = 0 ] || { cat "$HOST_TMP/fds/err"; host_fail "fds: exit $(cat "$HOST_TMP/fds/rc") (want 0: dump failed, then worked)"; }
errs=$(stat_of fds 's["dump_errors"]["manual"]')
echo "fds: manual dump errors counted: $errs; last errno $(stat_of fds 's["last_dump_errno"]')"
[ "$errs" -ge 1 ] || host_fail "fds: the failed dump was not counted"
grep -q '^heaptap: ' "$HOST_TMP/fds/err" || host_fail "fds: no heaptap: line on stderr about the failed dump"

# 2. Tables full: sampling every allocation into 16 stacks / 64 live entries.
host_run tables.plain - "$prog" tables
host_run tables "lg_prof_sample:0,prof_max_stacks:16,prof_max_live:64" "$prog" tables
cmp -s "$HOST_TMP/tables.plain/out" "$HOST_TMP/tables/out" || host_fail "tables: output differs"
[ "$(cat "$HOST_TMP/tables/rc")" = 0 ] || host_fail "tables: exit $(cat "$HOST_TMP/tables/rc")"
ds=$(stat_of tables 's["sampler"]["dropped_stack_table_full"]')
dl=$(stat_of tables 's["sampler"]["dropped_live_table_full"]')
echo "tables: dropped for a full stack table $ds, for a full live table $dl"
[ "$ds" -gt 0 ] && [ "$dl" -gt 0 ] || host_fail "tables: drops not counted"
[ "$(grep -c '^heaptap: ' "$HOST_TMP/tables/err")" -le 2 ] || host_fail "tables: more than one line per full table on stderr"
host_check_parse tables

# 3. Address space: the host's own mallocs fail (NULL), never the collector's doing.
host_run as.plain - bash -c "ulimit -v 400000; exec $prog as"
host_run as "" bash -c "ulimit -v 400000; exec $prog as"
host_run as0 "lg_prof_sample:0" bash -c "ulimit -v 400000; exec $prog as"
for t in as as0; do
	cmp -s "$HOST_TMP/as.plain/out" "$HOST_TMP/$t/out" || { cat "$HOST_TMP/$t/out" "$HOST_TMP/$t/err"; host_fail "$t: output differs"; }
	[ "$(cat "$HOST_TMP/$t/rc")" = 0 ] || host_fail "$t: exit $(cat "$HOST_TMP/$t/rc")"
done
echo "as: host behaves as unprofiled under RLIMIT_AS"
echo "fault limits ok"
