#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sec_http_cross_site.sh - web pages cannot drive the control plane (issue 14, item 5): requests
# whose Origin, Referer or Sec-Fetch-Site name another site (what an <img src> or a form on
# evil.example sends) are refused with 403 on every endpoint and have no effect (sampling rate
# and switch unchanged, no dump written, no Mesos run); the same requests from the server's own
# pages pass. IPv4-mapped loopback Hosts count as loopback. A bind beyond loopback refuses to
# start without a token (one stderr line, heaptap_http_start -> -EACCES) and, with one, keeps
# the Host check (a DNS name re-pointed at the machine is refused, IP literals pass).
set -u
for tool in curl python3; do
	command -v $tool >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
PROG=${HEAPTAP_BUILD:-$ROOT/build}/progs/http_host
[ -x "$PROG" ] || { echo "missing $PROG (make progs)"; exit 1; }
. "$(dirname "$0")/lib/http.sh"

port=$(free_port)
U=http://127.0.0.1:$port
mkdir "$tmp/dumps"
host_start "http:127.0.0.1:$port,prof_prefix:$tmp/dumps/hp,http_dump_rate_ms:0"

# ---- cross-site: every endpoint, every way a browser names the other site ----
sites=("Origin: http://evil.example" "Sec-Fetch-Site: cross-site" "Sec-Fetch-Site: same-site"
       "Referer: http://evil.example/page.html" "Origin: null" "Referer: http://127.0.0.1:$port.evil.example/"
       "Origin: http://localhost:$port")
paths=(/heaptap/sample?lg=0 /heaptap/active?on=0 /heaptap/dump "/memory-profiler/start?duration=1days"
       /memory-profiler/stop /pprof/heap /pprof/cmdline /debug/pprof/heap /heaptap/stats /)
n=0 refused=0
for h in "${sites[@]}"; do
	for p in "${paths[@]}"; do
		fetch "$p" -H "$h"
		n=$((n + 1))
		if [ "$code" = 403 ] && grep -q 'cross-site request refused' "$tmp/body"; then
			refused=$((refused + 1))
		else
			fail "$h on $p: $code $(head -c 200 "$tmp/body")"
		fi
	done
done
# what an <img src=http://127.0.0.1:PORT/heaptap/sample?lg=0> on evil.example sends
fetch "/heaptap/sample?lg=0" -H "Origin: http://evil.example" -H "Sec-Fetch-Site: cross-site" -H "Sec-Fetch-Mode: no-cors"
[ "$code" = 403 ] && refused=$((refused + 1)) || fail "img-style request: $code"
n=$((n + 1))
[ $refused = $n ] && ok "$refused cross-site requests refused with 403"

# no effect
fetch /heaptap/sample
[ "$(json 'j["lg_sample"]')" = 19 ] && ok "sampling rate unchanged (lg_sample 19)" || fail "sampling changed: $(cat "$tmp/body")"
fetch /heaptap/active
[ "$(json 'j["active"]')" = True ] && ok "sampling still on" || fail "switched: $(cat "$tmp/body")"
[ -z "$(ls "$tmp/dumps")" ] && ok "no dump written" || fail "dumps written: $(ls "$tmp/dumps")"
fetch /memory-profiler/state
[ "$(json 'j["memory_profiler"]["current_run"]["id"]')" = None ] && ok "no Mesos run started" ||
	fail "a run started: $(cat "$tmp/body")"

# the server's own pages, and tools that send none of these headers, pass
fetch /heaptap/dump -H "Origin: http://127.0.0.1:$port" -H "Sec-Fetch-Site: same-origin" -H "Referer: http://127.0.0.1:$port/"
[ "$code" = 200 ] && [ "$(ls "$tmp/dumps" | wc -l)" = 1 ] && ok "same-origin dump -> 200, one file" ||
	fail "same-origin dump: $code $(cat "$tmp/body")"
fetch /debug/pprof/heap?debug=1 -H "Referer: http://127.0.0.1:$port/debug/pprof/" -H "Sec-Fetch-Site: same-origin"
[ "$code" = 200 ] && ok "a link of /debug/pprof/ -> 200" || fail "link from the index: $code"
fetch /heaptap/stats -H "Sec-Fetch-Site: none"
[ "$code" = 200 ] && ok "typed into the address bar (Sec-Fetch-Site: none) -> 200" || fail "none: $code"

# ---- IPv4-mapped loopback is loopback ----
code=$(curl -s -g -o /dev/null -w '%{http_code}' "http://[::ffff:127.0.0.1]:$port/pprof/symbol")
[ "$code" = 200 ] && ok "http://[::ffff:127.0.0.1]:$port -> 200" || fail "[::ffff:127.0.0.1]: $code"
fetch /pprof/symbol -H "Host: [::ffff:7f00:1]:$port"
[ "$code" = 200 ] && ok "Host [::ffff:7f00:1] -> 200" || fail "Host [::ffff:7f00:1]: $code"
host_stop || fail "host exited with $?"

# ---- beyond loopback: a token or nothing ----
port2=$(free_port)
host_start "prof:true" "0.0.0.0:$port2"
api=$(grep -c '^api -13$' "$tmp/out")
lines=$(grep -c "refusing to listen on 0.0.0.0:$port2 without a token" "$tmp/err")
if [ "$api" = 2 ] && [ "$lines" = 1 ] && ! curl -s -o /dev/null "http://127.0.0.1:$port2/"; then
	ok "0.0.0.0 without a token: heaptap_http_start -> -EACCES twice, one stderr line, nothing listens"
else
	fail "0.0.0.0 without a token: $(cat "$tmp/out") / $(cat "$tmp/err")"
fi
host_stop || fail "host exited with $?"
host_start "http:0.0.0.0:$port2"
grep -q "refusing to listen on 0.0.0.0:$port2 without a token: set http_token" "$tmp/err" &&
	! curl -s -o /dev/null "http://127.0.0.1:$port2/" && ok "http:0.0.0.0 in HEAPTAP_CONF refused the same way" ||
	fail "conf 0.0.0.0: $(cat "$tmp/err")"
host_stop || fail "host exited with $?"

host_start "http:0.0.0.0:$port2,http_token:t0k"
U=http://127.0.0.1:$port2
fetch /pprof/symbol -H "Authorization: Bearer t0k"
[ "$code" = 200 ] && ok "0.0.0.0 with a token -> 200" || fail "0.0.0.0 with a token: $code"
fetch /pprof/symbol -H "Authorization: Bearer t0k" -H "Host: rebound.evil.example:$port2"
[ "$code" = 403 ] && ok "0.0.0.0: a DNS name as Host -> 403 (token or not)" || fail "Host name on 0.0.0.0: $code"
fetch /pprof/symbol -H "Authorization: Bearer t0k" -H "Host: 192.0.2.7:$port2"
[ "$code" = 200 ] && ok "0.0.0.0: an IP literal as Host -> 200" || fail "IP Host on 0.0.0.0: $code"
fetch /pprof/symbol -H "Authorization: Bearer t0k" -H "Origin: http://evil.example"
[ "$code" = 403 ] && ok "0.0.0.0: cross-site with the token -> 403" || fail "cross-site with token: $code"
host_stop || fail "host exited with $?"
host_start "http:0.0.0.0:$port2,http_token:t0k,http_hosts:box.example"
fetch /pprof/symbol -H "Authorization: Bearer t0k" -H "Host: BOX.example:$port2"
[ "$code" = 200 ] && ok "a name listed in http_hosts -> 200" || fail "http_hosts: $code"
host_stop || fail "host exited with $?"

echo "$fails failures"
[ $fails = 0 ]
