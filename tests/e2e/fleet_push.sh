#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# fleet_push.sh - the push client against loopback stand-ins for each backend
# (lib/push_standin.py enforces the rules the real servers apply): Pyroscope /ingest raw and
# multipart, Pyroscope's Connect push API, Parca's writeraw. fleet_host runs with every
# allocation sampled and push_interval:1s; every received profile must read in
# go tool pprof; across the pushes the alloc_space of churn_site adds up to exactly what the
# host allocated (each allocation in exactly one push: deltas, not totals) while inuse_space
# stays absolute; the labels name the service, host, pid, build ID and the user's labels;
# auth and tenant headers are sent. Then retries after failures, a full queue dropping its
# oldest profile (counted in /metrics) while the host keeps running, and a refusal.
# Nothing depends on timing: every wait polls with a generous bound.
set -u
for tool in curl python3; do
	command -v $tool >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
command -v go >/dev/null || [ -x /usr/lib/go/bin/go ] || { echo "skip: go not installed"; exit 77; }
. "$(dirname "$0")/lib/http.sh"
. "$(dirname "$0")/lib/fleet.sh"
[ -x "$FLEET_PROG" ] || { echo "missing $FLEET_PROG (make progs)"; exit 1; }
STANDIN=$(dirname "$0")/lib/push_standin.py
build_id=$(readelf -n "$FLEET_PROG" | awk '/Build ID/{print $3}')
spid=
stop_standin() { [ -n "$spid" ] && { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; }; spid=; }
trap 'stop_standin; cleanup' EXIT

# standin MODE DIR [ARGS...]: starts the stand-in; $sport is its port
standin() {
	local mode=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	python3 "$STANDIN" "$mode" "$dir" "$@" 2>"$dir/stderr" &
	spid=$!
	wait_for 30 "[ -s '$dir/port' ]" || { echo "stand-in did not start"; cat "$dir/stderr"; exit 1; }
	sport=$(cat "$dir/port")
}

# received DIR AFTER_NS: 0 when a profile taken after AFTER_NS has arrived
received_after() {
	python3 - "$1" "$2" <<'PY'
import glob, json, sys
d, after = sys.argv[1], int(sys.argv[2])
for f in glob.glob(d + "/req-*.json"):
    if any(p["time_nanos"] > after for p in json.load(open(f))["profiles"]):
        sys.exit(0)
sys.exit(1)
PY
}

# run_dialect NAME MODE PATH CONF STANDIN_ARGS...: one backend end to end
run_dialect() {
	local name=$1 mode=$2 path=$3 conf=$4
	shift 4
	local dir=$tmp/$name
	standin "$mode" "$dir" "$@"
	fleet_start "lg_prof_sample:0,push_url:http://127.0.0.1:$sport$path,push_interval:1s,push_service:svc1,push_labels:team=core+env=test$conf"
	cmd keep 10 1000
	wait_for 60 "ls '$dir'/req-*.json >/dev/null 2>&1" || fail "$name: nothing pushed"
	cmd churn 100 1000
	local after=$acked_ns
	wait_for 60 "received_after '$dir' $after" || fail "$name: no push after the host's allocations"
	fleet_stop || fail "$name: host exit status"
	stop_standin
	[ -s "$dir/refused.log" ] && fail "$name: the stand-in refused: $(head -3 "$dir/refused.log")"
	# every payload reads in go tool pprof; the deltas add up; inuse is absolute
	local sum=0 nreq=0 last_inuse= bad=0 f k v
	for f in $(ls "$dir"/req-*.json | sort -t- -k2 -n); do
		nreq=$((nreq + 1))
		for k in $(python3 -c "import json; print(' '.join(p['file'] for p in json.load(open('$f'))['profiles']))"); do
			go tool pprof -raw "$k" >/dev/null 2>&1 || { fail "$name: go tool pprof cannot read $k"; bad=1; }
		done
		local p0 p1
		p0=$(python3 -c "import json; print(json.load(open('$f'))['profiles'][0]['file'])")
		if [ "$mode" = parca ]; then
			p1=$(python3 -c "import json; print(json.load(open('$f'))['profiles'][1]['file'])")
			python3 -c "import json,sys; p=json.load(open('$f'))['profiles']; sys.exit(0 if p[0]['duration_nanos'] == 0 and p[1]['duration_nanos'] > 0 else 1)" ||
				fail "$name: the inuse profile must have no duration and the alloc one a duration"
			[ "$(site_value "$p0" alloc_space churn_site)" = 0 ] || fail "$name: alloc values in the inuse profile"
			[ "$(site_value "$p1" inuse_space keep_site)" = 0 ] || fail "$name: inuse values in the alloc profile"
		else
			p1=$p0
			python3 -c "import json,sys; sys.exit(0 if json.load(open('$f'))['profiles'][0]['duration_nanos'] > 0 else 1)" ||
				fail "$name: no duration_nanos"
		fi
		v=$(site_value "$p1" alloc_space churn_site)
		sum=$((sum + v))
		last_inuse=$(site_value "$p0" inuse_space keep_site)
	done
	[ $sum = 100000 ] && ok "$name: churn_site's alloc_space over $nreq pushes adds up to 100000" ||
		fail "$name: churn_site's alloc_space adds up to $sum over $nreq pushes, want 100000"
	[ "$last_inuse" = 10000 ] && ok "$name: keep_site's inuse_space is absolute (10000)" || fail "$name: last inuse keep_site $last_inuse"
	local lab
	lab=$(python3 -c "import json; print(json.dumps(json.load(open('$(ls "$dir"/req-*.json | head -1)'))['labels'], sort_keys=True))")
	python3 - "$lab" "$build_id" "$mode" <<'PY' && ok "$name: labels $lab" || fail "$name: labels $lab"
import json, socket, sys
l, bid, mode = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
want = {"service_name": "svc1", "team": "core", "env": "test", "build_id": bid}
if mode != "ingest":
    want["__name__"] = "memory"
ok = all(l.get(k) == v for k, v in want.items()) and l.get("pid", "").isdigit() and l.get("hostname")
sys.exit(0 if ok else 1)
PY
}

run_dialect ingest ingest /ingest ",push_token:sekret,push_tenant:team-a" --token sekret --tenant team-a
run_dialect ingest_multipart ingest /ingest ",push_format:ingest-multipart"
run_dialect connect connect /push.v1.PusherService/Push ",push_basic:ann:pa:ss" --basic ann:pa:ss
run_dialect parca parca /profiles/writeraw ""

# the stand-ins reject what the servers reject (so the checks above mean something)
standin ingest "$tmp/rules"
printf 'x' | curl -s -o /dev/null -w '%{http_code}' -F "profile=@-" "http://127.0.0.1:$sport/ingest?name=a%7B%7D&from=1&until=2&spyName=x&format=pprof" >"$tmp/c"
[ "$(cat "$tmp/c")" = 400 ] || fail "stand-in took format=pprof with a multipart body"
stop_standin

# ---- retries, a full queue, a refusal ----
port=$(free_port)
U=http://127.0.0.1:$port
standin connect "$tmp/retry" --fail 2
fleet_start "http:127.0.0.1:$port,push_url:http://127.0.0.1:$sport/push.v1.PusherService/Push,push_interval:1s"
wait_for 90 "ls '$tmp/retry'/req-*.json >/dev/null 2>&1" && ok "pushed after two failures (retries with backoff)" || fail "no push after the failures"
fetch /metrics
e=$(awk '$1 == "heaptap_push_errors_total" {print $2}' "$tmp/body")
[ "${e:-0}" -ge 2 ] && ok "heaptap_push_errors_total = $e" || fail "push errors $e"
fleet_stop
stop_standin

standin connect "$tmp/down" --fail 1000000
fleet_start "http:127.0.0.1:$port,push_url:http://127.0.0.1:$sport/push.v1.PusherService/Push,push_interval:1s,push_queue:2,push_retries:100,push_timeout_ms:500"
wait_for 120 "curl -s '$U/metrics' | awk '\$1 == \"heaptap_push_dropped_total\" && \$2 >= 1 {f=1} END {exit !f}'" &&
	ok "a full queue drops its oldest profile, counted" || fail "nothing dropped while the backend was down"
fetch /metrics
q=$(awk '$1 == "heaptap_push_queue_profiles" {print $2}' "$tmp/body")
[ "$q" -le 2 ] && ok "the queue holds at most push_queue (2): $q" || fail "queue $q"
cmd keep 1 16 # the host is not held up
fleet_stop
grep -q 'push: a push failed' "$tmp/err" && [ "$(grep -c 'push: a push failed' "$tmp/err")" = 1 ] && ok "the failure logged once" || fail "log: $(cat "$tmp/err")"
stop_standin

standin ingest "$tmp/refuse" --token right
fleet_start "http:127.0.0.1:$port,push_url:http://127.0.0.1:$sport/ingest,push_interval:1s,push_token:wrong"
wait_for 60 "curl -s '$U/metrics' | awk '\$1 == \"heaptap_push_dropped_total\" && \$2 >= 1 {f=1} END {exit !f}'" &&
	ok "a refused profile (401) is dropped at once, counted" || fail "refusal not counted"
fleet_stop
grep -q 'push: the backend refused a profile (HTTP status 401' "$tmp/err" && ok "the refusal logged with its status" || fail "refusal log: $(cat "$tmp/err")"
stop_standin

# a short-lived host (push_interval:1h: no push while it runs) is not lost: its interval is
# pushed at exit, every allocation in it
standin ingest "$tmp/exit"
fleet_start "lg_prof_sample:0,push_url:http://127.0.0.1:$sport/ingest,push_interval:1h"
cmd churn 100 1000
fleet_stop || fail "exit push: host exit status"
stop_standin
n=$(ls "$tmp/exit"/req-*.json 2>/dev/null | wc -l)
if [ "$n" = 1 ]; then
	p=$(python3 -c "import json,glob; print(json.load(open(glob.glob('$tmp/exit/req-*.json')[0]))['profiles'][0]['file'])")
	v=$(site_value "$p" alloc_space churn_site)
	[ "$v" = 100000 ] && ok "a host that exits before its first interval pushes at exit (churn_site 100000)" ||
		fail "exit push: churn_site alloc_space $v, want 100000"
else
	fail "exit push: $n profiles received, want 1: $(cat "$tmp/err")"
fi
# the backend failing at exit: one attempt, then one line saying what was lost
standin connect "$tmp/exitdown" --fail 1000000
fleet_start "push_url:http://127.0.0.1:$sport/push.v1.PusherService/Push,push_interval:1h"
fleet_stop || fail "exit push, backend down: host exit status"
stop_standin
grep -q '^heaptap: push: 1 profile not sent at exit (refused, failed, or out of the exit' "$tmp/err" &&
	ok "a profile the backend did not take at exit is said and counted" || fail "exit loss log: $(cat "$tmp/err")"

# a URL heaptap cannot use is refused once, and the host runs on
fleet_start "push_url:https://example.com/ingest"
cmd keep 1 16
fleet_stop || fail "host with an https push_url"
grep -q 'push_url must be http://' "$tmp/err" && ok "https:// refused with a pointer to a local agent" || fail "https log: $(cat "$tmp/err")"

[ $fails -eq 0 ] && echo "all push checks passed"
exit $((fails > 0))
