#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# fault_conf.sh - hostile HEAPTAP_CONF values: garbage, huge, negative, duplicated, unknown keys,
# empty items, a 64 KiB value. One clear stderr line per bad item naming it, defaults (or the
# last good value) in force, the host unaffected.
. "$(dirname "$0")/../e2e/lib/host.sh"
prog=$ROOT/build/progs/stress_faults
[ -x "$prog" ] || host_fail "$prog not built (make progs)"
opts() { grep '^STATS ' "$HOST_TMP/$1/err" | tail -n 1 | cut -c7- | python3 -c "import json,sys; o=json.load(sys.stdin)['options']; print($2)"; }
check() { # TAG CONF EXPECTED_BAD_LINES PYEXPR
	host_run "$1" "$2" "$prog" tables
	cmp -s "$HOST_TMP/plain/out" "$HOST_TMP/$1/out" || host_fail "$1: output differs"
	[ "$(cat "$HOST_TMP/$1/rc")" = 0 ] || host_fail "$1: exit $(cat "$HOST_TMP/$1/rc")"
	local n; n=$(grep -c '^heaptap: HEAPTAP_CONF' "$HOST_TMP/$1/err")
	echo "$1: $n complaint(s): $(grep '^heaptap: HEAPTAP_CONF' "$HOST_TMP/$1/err" | head -3 | tr '\n' '|')"
	[ "$n" = "$3" ] || host_fail "$1: $n complaint lines, want $3"
	[ "$(opts "$1" "$4")" = True ] || host_fail "$1: options in force wrong ($4)"
}
host_run plain - "$prog" tables
check garbage 'lg_prof_sample:banana,prof_accum:maybe,@@@' 3 'o["lg_prof_sample"] == 19 and o["prof_accum"] == False'
check huge 'lg_prof_sample:99999999999999999999999,prof_bt_max:1000000,lg_prof_interval:64' 3 'o["lg_prof_sample"] == 19 and o["prof_bt_max"] <= 256'
check negative 'lg_prof_sample:-3,prof_max_dumps:-1,prof_max_stacks:-5' 3 'o["lg_prof_sample"] == 19 and o["prof_max_dumps"] == 0'
check dup 'lg_prof_sample:10,lg_prof_sample:12' 0 'o["lg_prof_sample"] == 12'
check unknown 'no_such_key:1,prof_frobnicate:true,lg_prof_sample:15' 2 'o["lg_prof_sample"] == 15'
check empty ',,,:,lg_prof_sample:16,,' 1 'o["lg_prof_sample"] == 16'
long=$(head -c 65536 /dev/zero | tr '\0' 'x')
check long "prof_prefix:$long,lg_prof_sample:17" 1 'o["lg_prof_sample"] == 17'
echo "fault conf ok"
