#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sec_http_users.sh - the control plane serves its owner only (issue 14, item 4): a host run
# by root answers root (200) but not `nobody` (403 with a body naming the rule, over IPv4 and
# over an IPv6 socket speaking IPv4-mapped, and without effect: the sampling rate stays); a
# host run by nobody answers nobody and root but not daemon; http_allow_users widens the rule
# (a user id list, `any`); a Unix socket (http:unix:PATH) is created 0600 and its clients are
# checked with SO_PEERCRED (a nobody client refused even when the file is opened up).
# Clients switch user with setpriv, so the test needs root (skipped otherwise).
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root to run clients as other users"; exit 77; }
for tool in curl python3 setpriv; do
	command -v $tool >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
id nobody >/dev/null 2>&1 && id daemon >/dev/null 2>&1 || { echo "skip: no users nobody and daemon"; exit 77; }
PROG=${HEAPTAP_BUILD:-$ROOT/build}/progs/http_host
[ -x "$PROG" ] || { echo "missing $PROG (make progs)"; exit 1; }
. "$(dirname "$0")/lib/http.sh"
chmod 755 "$tmp" # the hosts and clients of other users reach the program, socket and stop file
NOBODY=$(id -u nobody)

# status USER URL [curl args...]: the status of a GET by USER; the body in $body
status() {
	local user=$1 url=$2 out
	shift 2
	out=$(as "$user" curl -s -g -w '\n%{http_code}' "$@" "$url")
	code=${out##*$'\n'}
	body=${out%$'\n'*}
}
expect() { # user url want [curl args...]
	local user=$1 url=$2 want=$3
	shift 3
	status "$user" "$url" "$@"
	if [ "$code" = "$want" ]; then ok "$user: $url -> $code"; else fail "$user: $url -> $code, want $want: $body"; fi
}

# ---- a host run by root ----
port=$(free_port)
U=http://127.0.0.1:$port
host_start "http:127.0.0.1:$port,prof_prefix:$tmp/hp"
expect root "$U/heaptap/sample" 200
expect nobody "$U/heaptap/sample?lg=0" 403
case $body in
*"user id $NOBODY may not use this control plane"*"http_allow_users"*) ok "the 403 says who and why" ;;
*) fail "403 body: $body" ;;
esac
expect nobody "$U/pprof/cmdline" 403
expect nobody "$U/pprof/heap" 403
expect nobody "$U/heaptap/dump" 403
# an AF_INET6 client socket speaking IPv4-mapped is found in /proc/net/tcp6
expect nobody "http://[::ffff:127.0.0.1]:$port/heaptap/sample?lg=1" 403
expect root "http://[::ffff:127.0.0.1]:$port/pprof/symbol" 200
status root "$U/heaptap/sample"
[ "$(echo "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["lg_sample"])')" = 19 ] &&
	ok "the refused requests changed nothing (lg_sample 19)" || fail "sampling changed: $body"
ls "$tmp"/hp.* >/dev/null 2>&1 && fail "a refused dump was written"
host_stop || fail "host exited with $?"

# ---- widened: one more user id, then anyone ----
host_start "http:127.0.0.1:$port,http_allow_users:$NOBODY"
expect nobody "$U/pprof/symbol" 200
expect daemon "$U/pprof/symbol" 403
host_stop || fail "host exited with $?"
host_start "http:127.0.0.1:$port,http_allow_users:any"
expect daemon "$U/pprof/symbol" 200
host_stop || fail "host exited with $?"

# ---- a host run by nobody: its own user and root ----
HOST_USER=nobody host_start "http:127.0.0.1:$port"
expect nobody "$U/pprof/symbol" 200
expect root "$U/pprof/symbol" 200
expect daemon "$U/pprof/symbol" 403
host_stop || fail "host exited with $?"

# ---- a Unix socket, created 0600, clients checked with SO_PEERCRED ----
sock=$tmp/ctl.sock
host_start "http:unix:$sock"
mode=$(stat -c '%F %a %U' "$sock" 2>/dev/null)
[ "$mode" = "socket 600 root" ] && ok "unix socket: $mode" || fail "unix socket: '$mode' ($(cat "$tmp/err"))"
expect root "http://localhost/pprof/symbol" 200 --unix-socket "$sock"
chmod 666 "$sock" # as if the directory or the mode let others in: the peer's user still decides
expect nobody "http://localhost/pprof/cmdline" 403 --unix-socket "$sock"
host_stop || fail "host exited with $?"
# a stale socket of a finished run is replaced, anything else at the path is left alone
host_start "http:unix:$sock"
expect root "http://localhost/pprof/symbol" 200 --unix-socket "$sock"
host_stop || fail "host exited with $?"
rm -f "$sock"
echo "not a socket" >"$sock"
host_start "http:unix:$sock"
grep -q "cannot listen on unix:$sock" "$tmp/err" && [ "$(cat "$sock")" = "not a socket" ] &&
	ok "a file at the socket's path is not replaced" || fail "file at the path: $(cat "$tmp/err")"
host_stop || fail "host exited with $?"

echo "$fails failures"
[ $fails = 0 ]
