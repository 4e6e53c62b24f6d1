# SPDX-License-Identifier: BSD-2-Clause
# tests/e2e/lib/http.sh - what the http_* and sec_http_* tests share: a scratch directory $tmp
# and the host's $pid, cleaned up at exit (the host is told to stop through $tmp/stop and
# $tmp/go, then killed), the failure counter $fails with fail/ok, free_port, fetch/header/json
# over the last reply from the server at $U, host_start/host_stop for build/progs/http_host and
# `as USER` for clients of another user. Sourced after the script's tool checks, never run;
# asserts nothing.
tmp=$(mktemp -d)
pid=
cleanup() {
	touch "$tmp/stop" "$tmp/go"
	[ -n "$pid" ] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# fetch PATH [curl args...]: GET $U$PATH; body in $tmp/body, headers in $tmp/hdr, status in $code
fetch() {
	local path=$1; shift
	code=$(curl -s -o "$tmp/body" -D "$tmp/hdr" -w '%{http_code}' "$@" "$U$path")
}
header() { grep -i "^$1:" "$tmp/hdr" | head -n 1 | cut -d: -f2- | sed 's/^ //; s/\r$//'; }
json() { # python expression over j (the parsed body)
	python3 -c "import json,sys; j=json.load(open('$tmp/body')); print($1)" 2>&1
}

# host_start CONF [ARG...]: starts $PROG (build/progs/http_host unless set) under the collector
# with HEAPTAP_CONF=CONF,prof_final:false and TMPDIR=$tmp, as user $HOST_USER when set (setpriv),
# stop file $tmp/stop, output in $tmp/out and $tmp/err; waits for its "ready" line (the server
# starts before main, so it listens by then). $pid is the host. host_stop stops it and returns
# its exit status.
host_start() {
	local conf=$1 run=()
	shift
	[ -n "${HOST_USER:-}" ] && run=(setpriv --reuid="$HOST_USER" --regid="$(id -gn "$HOST_USER")" --clear-groups)
	rm -f "$tmp/stop" "$tmp/out"
	"${run[@]}" env TMPDIR="$tmp" HEAPTAP_CONF="$conf,prof_final:false" LD_PRELOAD="$HEAPTAP_LIB" \
		"${PROG:-$HEAPTAP_BUILD/progs/http_host}" "$tmp/stop" "$@" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	for _ in $(seq 100); do
		grep -q '^ready' "$tmp/out" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "host did not start"; cat "$tmp/err"; exit 1
}
host_stop() {
	touch "$tmp/stop"
	wait "$pid"
	local rc=$?
	pid=
	rm -f "$tmp/stop"
	return $rc
}
# as USER CMD...: runs CMD as USER (and its primary group, no others).
as() {
	local user=$1
	shift
	setpriv --reuid="$user" --regid="$(id -gn "$user")" --clear-groups "$@"
}
