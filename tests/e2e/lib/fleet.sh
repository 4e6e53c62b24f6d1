# SPDX-License-Identifier: BSD-2-Clause
# tests/e2e/lib/fleet.sh - what the fleet_* tests share (sourced after lib/http.sh, never run;
# asserts nothing): fleet_start runs build/progs/fleet_host under the collector, fed through
# the FIFO $tmp/in (descriptor 3); cmd sends it one command and waits for its "ok <ns>"
# answer (the wall-clock time in $acked_ns); site_value reads one function's flat value
# from a pprof profile with go tool pprof; wait_for polls a condition with a generous bound.
FLEET_PROG=$HEAPTAP_BUILD/progs/fleet_host
export PATH="/usr/lib/go/bin:$PATH"

# fleet_start CONF: the host with HEAPTAP_CONF=CONF (plus prof_final:false); $pid is the host.
fleet_start() {
	rm -f "$tmp/in" "$tmp/out"
	mkfifo "$tmp/in"
	env TMPDIR="$tmp" HEAPTAP_CONF="$1,prof_final:false" LD_PRELOAD="$HEAPTAP_LIB" \
		"$FLEET_PROG" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	exec 3>"$tmp/in"
	wait_for 30 "grep -q '^ready' '$tmp/out'" || { echo "host did not start"; cat "$tmp/err"; exit 1; }
	nacks=0
}
fleet_stop() {
	echo quit >&3
	exec 3>&-
	wait "$pid"
	local rc=$?
	pid=
	return $rc
}
# cmd LINE: sends LINE, waits for its answer; $acked_ns is the host's clock when it was done
cmd() {
	echo "$*" >&3
	nacks=$((nacks + 1))
	wait_for 60 "[ \$(grep -c '^ok ' '$tmp/out') -ge $nacks ]" || { echo "host did not answer '$*'"; cat "$tmp/err"; exit 1; }
	acked_ns=$(grep '^ok ' "$tmp/out" | sed -n "${nacks}p" | cut -d' ' -f2)
}
# wait_for SECONDS CONDITION: polls CONDITION (a shell string) every 0.1 s; 1 when it never holds
wait_for() {
	local n=$(($1 * 10)) i
	for ((i = 0; i < n; i++)); do
		eval "$2" && return 0
		sleep 0.1
	done
	return 1
}
# site_value FILE SAMPLE_INDEX FUNCTION: FUNCTION's flat value (0 when absent), bytes or count
site_value() {
	go tool pprof -top -nodecount=1000 -sample_index="$2" -unit=B -symbolize=local "$FLEET_PROG" "$1" 2>/dev/null |
		awk -v f="$3" '$NF == f { v = $1; sub(/B$/, "", v); print v; found = 1; exit } END { if (!found) print 0 }'
}
# raw_field FILE FIELD: "Duration" or "Time" from go tool pprof -raw
raw_field() {
	go tool pprof -raw "$1" 2>/dev/null | awk -v f="$2:" '$1 == f { $1 = ""; sub(/^ /, ""); print; exit }'
}
