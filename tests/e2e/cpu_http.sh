#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cpu_http.sh - the CPU endpoints on a running process (build/progs/cpu_split loop: work_a 3 :
# work_b 1 in the main thread, work_side in another):
#  1. /debug/pprof/profile?seconds=2 answers after the window with a pprof CPU profile that go
#     tool pprof reads with the 3:1 split; meanwhile a second one gets Go's 500 "cpu profiling
#     already in use" with X-Go-Pprof: 1, and / answers at once (the window does not block
#     the server);
#  2. seconds beyond the server's limit: 400, Go's message;
#  3. jeprof fetches /pprof/profile (gperftools' format) by URL, with --seconds=1, and shows
#     the split.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/cpu.sh"
. "$(dirname "$0")/lib/http.sh"
ht_init
command -v go >/dev/null || ht_skip "go is not installed"
command -v jeprof >/dev/null || ht_skip "jeprof is not installed"
command -v curl >/dev/null || ht_skip "curl is not installed"
ht_need_prog cpu_split
export PPROF_TMPDIR=$TMP/pprof HOME=$TMP
d=$TMP/run
mkdir -p "$d"
port=$(free_port)
U=http://127.0.0.1:$port
(cd "$d" && exec env LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=prof:false,http:127.0.0.1:$port,cpu_hz:500 \
	"$BIN" loop 4000000 "$d/stop") >"$d/prog.out" 2>&1 &
pid=$!
trap 'touch "$d/stop"; wait $pid 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "$U/" && break; sleep 0.1; done

curl -s -o "$d/p.pb" -w '%{http_code}\n' "$U/debug/pprof/profile?seconds=2" >"$d/p.code" &
cpid=$!
# the first profile has started (not a guessed 0.5 s: a slow start flipped the two requests)
for _ in $(seq 200); do
	curl -s "$U/heaptap/stats" | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["cpu"]["running"] else 1)' 2>/dev/null && break
	sleep 0.05
done
curl -s -D "$d/busy.h" -o "$d/busy.body" "$U/debug/pprof/profile?seconds=1"
t0=$(date +%s%N)
code=$(curl -s -o /dev/null -w '%{http_code}' "$U/")
t1=$(date +%s%N)
wait $cpid
grep -q '^HTTP/1.1 500' "$d/busy.h" || { cat "$d/busy.h"; ht_fail "a second profile did not get 500"; }
grep -qi '^X-Go-Pprof: 1' "$d/busy.h" || ht_fail "the 500 lacks X-Go-Pprof: 1"
grep -qx 'Could not enable CPU profiling: cpu profiling already in use' "$d/busy.body" || ht_fail "the 500's text is not Go's"
[ "$code" = 200 ] && [ $(( (t1 - t0) / 1000000 )) -lt 1000 ] || ht_fail "/ did not answer at once during the window ($code)"
[ "$(cat "$d/p.code")" = 200 ] || ht_fail "/debug/pprof/profile answered $(cat "$d/p.code")"
cpu_gotool "$BIN" "$d/p.pb" "$d/go.txt" || ht_fail "go tool pprof cannot read the HTTP profile"
grep -q 'Duration: 2' "$d/go.txt.raw" || { head -20 "$d/go.txt.raw"; ht_fail "the window did not last 2 s"; }
cpu_share "$d/go.txt" work_a "work_a work_b" 0.60 0.90 || ht_fail "HTTP pprof: split is off"

curl -s -D "$d/long.h" -o "$d/long.body" "$U/debug/pprof/profile?seconds=3600"
grep -q '^HTTP/1.1 400' "$d/long.h" && grep -qx "profile duration exceeds server's WriteTimeout" "$d/long.body" ||
	{ cat "$d/long.h" "$d/long.body"; ht_fail "seconds=3600 was not refused with Go's 400"; }

cpu_jeprof "$BIN" "$U/pprof/profile" "$d/je.txt" --seconds=1 || ht_fail "jeprof cannot fetch /pprof/profile"
cpu_share "$d/je.txt" work_a "work_a work_b" 0.55 0.92 || ht_fail "HTTP gperftools: split is off"
echo ok
