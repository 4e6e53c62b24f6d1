#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sec_http_odds.sh - the smaller HTTP findings of issue 14 (item 9) and the dump rate limit: a
# 413 for a Content-Length past 64 bits says "request body too large"; HTTP/1.1 without Host
# is 400 (HTTP/1.0 without is served); absurd parameter values on every endpoint are 400, not
# 200, and change nothing; the bearer scheme is accepted in any case, wrong tokens of every
# length are 401; a bad listen address is reported once however often it is tried; dumps asked
# for over HTTP (/heaptap/dump, /memory-profiler/stop, one shared gate) are limited to one per
# http_dump_rate_ms, the others answered 429 with Retry-After.
set -u
for tool in curl python3; do
	command -v $tool >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
PROG=${HEAPTAP_BUILD:-$ROOT/build}/progs/http_host
[ -x "$PROG" ] || { echo "missing $PROG (make progs)"; exit 1; }
. "$(dirname "$0")/lib/http.sh"

# raw REQUEST: sends the bytes as they are; the reply in $tmp/raw, its status in $code
raw() {
	python3 - "$port" "$1" >"$tmp/raw" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
sys.stdout.write(data.decode("latin-1"))
PY
	code=$(head -n 1 "$tmp/raw" | cut -d' ' -f2)
}

port=$(free_port)
U=http://127.0.0.1:$port
mkdir "$tmp/dumps"
host_start "http:127.0.0.1:$port,prof_prefix:$tmp/dumps/hp,http_dump_rate_ms:0"

# ---- 413 and Host ----
raw 'POST /pprof/symbol HTTP/1.1\r\nHost: localhost\r\nContent-Length: 99999999999999999999999\r\n\r\n'
[ "$code" = 413 ] && grep -q '^request body too large' "$tmp/raw" && ok "413 says: $(tail -n 1 "$tmp/raw")" ||
	fail "413 body: $(cat "$tmp/raw")"
raw 'GET /pprof/symbol HTTP/1.1\r\n\r\n'
[ "$code" = 400 ] && grep -q 'without Host' "$tmp/raw" && ok "HTTP/1.1 without Host -> 400" || fail "no Host: $(cat "$tmp/raw")"
raw 'GET /pprof/symbol HTTP/1.0\r\n\r\n'
[ "$code" = 200 ] && ok "HTTP/1.0 without Host -> 200" || fail "HTTP/1.0 without Host: $code"

# ---- absurd parameter values: 400, and nothing changes ----
absurd=("/heaptap/sample?lg=99999" "/heaptap/sample?lg=999999999999999999999" "/heaptap/sample?lg=-1"
        "/heaptap/sample?lg=1.5" "/heaptap/sample?lg=" "/heaptap/active?on=111111111111111111111111"
        "/heaptap/active?on=yes" "/memory-profiler/start?duration=0secs" "/memory-profiler/start?duration=2days"
        "/memory-profiler/start?duration=99999999999999999999999999secs" "/memory-profiler/start?duration=-5secs"
        "/memory-profiler/start?duration=$(printf '1%.0s' $(seq 80))secs"
        "/debug/pprof/heap?seconds=-1" "/debug/pprof/heap?seconds=abc" "/debug/pprof/heap?debug=abc"
        "/debug/pprof/heap?debug=99999999999999" "/debug/pprof/allocs?debug=-1" "/pprof/heap?seconds=-1"
        "/debug/mem/pprof/profile?seconds=-1" "/debug/mem/pprof/profile?seconds=$(printf '9%.0s' $(seq 40))"
        "/memory-profiler/download/raw?id=12x" "/memory-profiler/download/raw?id=%2B5"
        "/memory-profiler/download/text?id=$(printf '7%.0s' $(seq 40))" "/memory-profiler/download/graph?id=")
bad=0
for p in "${absurd[@]}"; do
	fetch "$p"
	if [ "$code" = 400 ]; then bad=$((bad + 1)); else fail "$p -> $code: $(head -c 200 "$tmp/body")"; fi
done
[ $bad = ${#absurd[@]} ] && ok "$bad absurd parameter values -> 400"
fetch /heaptap/sample
[ "$(json 'j["lg_sample"]')" = 19 ] && ok "lg_sample still 19" || fail "sampling changed: $(cat "$tmp/body")"
fetch /heaptap/active
[ "$(json 'j["active"]')" = True ] && ok "still active" || fail "switched: $(cat "$tmp/body")"
fetch /memory-profiler/state
[ "$(json 'j["memory_profiler"]["current_run"]["id"]')" = None ] && ok "no run started" || fail "a run: $(cat "$tmp/body")"
# and sensible ones still work
for p in "/heaptap/sample?lg=19" "/debug/mem/pprof/profile?seconds=30" "/debug/pprof/heap?debug=1" "/debug/pprof/heap?debug=0"; do
	fetch "$p"
	[ "$code" = 200 ] || fail "$p -> $code: $(head -c 200 "$tmp/body")"
done

# ---- dumps over HTTP: unlimited here (http_dump_rate_ms:0) ----
for i in 1 2 3; do
	fetch /heaptap/dump
	[ "$code" = 200 ] || fail "dump $i with no limit: $code"
done
[ "$(ls "$tmp/dumps" | wc -l)" = 3 ] && ok "http_dump_rate_ms:0: 3 dumps" || fail "dumps: $(ls "$tmp/dumps")"
host_stop || fail "host exited with $?"

# ---- one dump per http_dump_rate_ms (a minute here, so the test does not depend on speed) ----
rm -f "$tmp"/dumps/*
host_start "http:127.0.0.1:$port,prof_prefix:$tmp/dumps/hp,http_dump_rate_ms:60000"
fetch /heaptap/dump
[ "$code" = 200 ] && ok "first dump -> 200" || fail "first dump: $code"
fetch /heaptap/dump
ra=$(header Retry-After)
[ "$code" = 429 ] && [ "$ra" -ge 59 ] && [ "$ra" -le 60 ] && [ "$(json 'j["errno"]')" = -11 ] &&
	ok "second dump -> 429, Retry-After $ra" || fail "second dump: $code, Retry-After '$ra', $(cat "$tmp/body")"
fetch /memory-profiler/start?duration=1hrs
[ "$code" = 200 ] || fail "start: $code"
fetch /memory-profiler/stop
[ "$code" = 429 ] && [ -n "$(header Retry-After)" ] && ok "Mesos stop shares the gate -> 429" ||
	fail "stop within the minute: $code $(cat "$tmp/body")"
fetch /memory-profiler/state
[ "$(json 'j["memory_profiler"]["current_run"]["remaining_seconds"] > 3000')" = True ] &&
	ok "the refused stop left the run going" || fail "state: $(cat "$tmp/body")"
[ "$(ls "$tmp/dumps" | wc -l)" = 1 ] && ok "one dump file" || fail "dumps: $(ls "$tmp/dumps")"
host_stop || fail "host exited with $?"

# ---- tokens ----
host_start "http:127.0.0.1:$port,http_token:s3cr3t"
statuses=
for auth in "Bearer s3cr3t" "bearer s3cr3t" "BEARER s3cr3t" "Bearer  s3cr3t" "Basic s3cr3t" "Bearer s3cr3T" \
            "Bearer s3cr3" "Bearer s3cr3tt" "Bearer $(printf 'x%.0s' $(seq 300))" "bearer"; do
	statuses="$statuses $(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: $auth" "$U/pprof/symbol")"
done
want=" 200 200 200 200 401 401 401 401 401 401"
[ "$statuses" = "$want" ] && ok "tokens:$statuses" || fail "tokens:$statuses, want$want"
host_stop || fail "host exited with $?"

# ---- a bad address, tried three times (HEAPTAP_CONF and twice through the API): one line ----
host_start "http:bogus" bogus
n=$(grep -c "bad listen address 'bogus'" "$tmp/err")
[ "$n" = 1 ] && [ "$(grep -c '^api -22$' "$tmp/out")" = 2 ] && ok "bad address reported once" ||
	fail "bad address: $n lines: $(cat "$tmp/err")"
host_stop || fail "host exited with $?"

echo "$fails failures"
[ $fails = 0 ]
