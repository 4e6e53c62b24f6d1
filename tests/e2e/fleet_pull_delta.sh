#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# fleet_pull_delta.sh - the pulled delta profiles with default options (no prof_accum),
# every allocation sampled (lg_prof_sample:0) so the expected values are exact:
# /debug/pprof/allocs?seconds=N holds in alloc_* exactly what fleet_host allocated during
# the window and in inuse_* what is live at its end, with duration_nanos = the window;
# the server keeps serving while the request waits; /debug/pprof/delta_heap gives what was
# allocated since the previous request to it; the endpoints heaptap does not serve answer
# their documented status; bad windows are refused. Payloads are read with go tool pprof.
set -u
for tool in curl python3; do
	command -v $tool >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
command -v go >/dev/null || [ -x /usr/lib/go/bin/go ] || { echo "skip: go not installed"; exit 77; }
. "$(dirname "$0")/lib/http.sh"
. "$(dirname "$0")/lib/fleet.sh"
[ -x "$FLEET_PROG" ] || { echo "missing $FLEET_PROG (make progs)"; exit 1; }
port=$(free_port)
U=http://127.0.0.1:$port
fleet_start "http:127.0.0.1:$port,lg_prof_sample:0"

cmd keep 10 1000
cmd churn 100 1000 # before any window: in no delta

# ---- ?seconds=N: what was allocated during the window ----
# The window must contain the allocations made while it is open; on a machine so slow that
# the answer came after the window closed, try again with a longer one (not a timing bound).
done_window=
for secs in 3 10 30; do
	curl -s -o "$tmp/delta.pb.gz" -D "$tmp/delta.hdr" -w '%{http_code}' "$U/debug/pprof/allocs?seconds=$secs" >"$tmp/delta.code" &
	cpid=$!
	wait_for 60 "curl -s '$U/metrics' | grep -q '^heaptap_delta_windows 1\$'" || fail "the window never opened (or /metrics blocked)"
	fetch /debug/pprof/
	[ "$code" = 200 ] && ok "the server answers while a ?seconds=$secs request waits" || fail "index while waiting: $code"
	cmd churn 50 2000
	cmd keep 5 1000
	wait $cpid
	[ "$(cat "$tmp/delta.code")" = 200 ] || { fail "allocs?seconds=$secs: status $(cat "$tmp/delta.code")"; break; }
	# the snapshot time (Time) must come after the host's last answer
	snap_ns=$(go tool pprof -raw "$tmp/delta.pb.gz" 2>/dev/null | python3 -c '
import sys, re, datetime
for l in sys.stdin:
    m = re.match(r"Time: (\S+ \S+)\.(\d+) ", l)
    if m:
        t = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.timezone.utc)
        print(int(t.timestamp()) * 10**9 + int(m.group(2).ljust(9, "0")[:9])); break')
	if [ -n "$snap_ns" ] && [ "$snap_ns" -gt "$acked_ns" ]; then
		done_window=$secs
		break
	fi
	echo "note: the ?seconds=$secs window closed before the host was done; trying a longer one"
	cmd churn 0 0 # resynchronise
done
[ -n "$done_window" ] || fail "no window contained the allocations"
if [ -n "$done_window" ]; then
	[ "$(grep -i '^Content-Disposition' "$tmp/delta.hdr" | tr -d '\r')" = 'Content-Disposition: attachment; filename="allocs-delta"' ] ||
		fail "Content-Disposition: $(grep -i '^Content-Disposition' "$tmp/delta.hdr")"
	v=$(site_value "$tmp/delta.pb.gz" alloc_space churn_site)
	[ "$v" = 100000 ] && ok "alloc_space of churn_site in the window: 100000" || fail "alloc_space churn_site $v, want 100000 (50 x 2000, not the 100 x 1000 before)"
	v=$(site_value "$tmp/delta.pb.gz" alloc_space keep_site)
	[ "$v" = 5000 ] && ok "alloc_space of keep_site in the window: 5000" || fail "alloc_space keep_site $v, want 5000"
	v=$(site_value "$tmp/delta.pb.gz" inuse_space keep_site)
	[ "$v" = 15000 ] && ok "inuse_space of keep_site at the end: 15000 (absolute)" || fail "inuse_space keep_site $v, want 15000"
	v=$(site_value "$tmp/delta.pb.gz" inuse_space churn_site)
	[ "$v" = 0 ] && ok "inuse_space of churn_site: 0" || fail "inuse_space churn_site $v, want 0"
	v=$(site_value "$tmp/delta.pb.gz" alloc_objects churn_site)
	[ "$v" = 50 ] && ok "alloc_objects of churn_site: 50" || fail "alloc_objects churn_site $v, want 50"
	d=$(raw_field "$tmp/delta.pb.gz" Duration)
	python3 -c "import sys; d=float('$d'); sys.exit(0 if $done_window - 0.01 <= d <= $done_window + 5 else 1)" &&
		ok "duration_nanos: ${d}s for seconds=$done_window" || fail "duration $d for seconds=$done_window"
	go tool pprof -raw "$tmp/delta.pb.gz" 2>/dev/null | grep -q 'alloc_space/bytes\[dflt\]' && ok "allocs delta defaults to alloc_space" || fail "allocs delta: default sample type is not alloc_space"
	for t in alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes; do
		go tool pprof -raw "$tmp/delta.pb.gz" 2>/dev/null | grep -q "$t" || fail "sample type $t missing"
	done
fi

# heap?seconds=N works the same (inuse is the default there)
cmd churn 0 0
curl -s -o "$tmp/h.pb.gz" -w '%{http_code}' "$U/debug/pprof/heap?seconds=1" >"$tmp/h.code"
[ "$(cat "$tmp/h.code")" = 200 ] && go tool pprof -raw "$tmp/h.pb.gz" >/dev/null 2>&1 && ok "heap?seconds=1 reads in go tool pprof" || fail "heap?seconds=1: $(cat "$tmp/h.code")"
v=$(site_value "$tmp/h.pb.gz" alloc_space churn_site)
[ "$v" = 0 ] && ok "nothing allocated in an idle window" || fail "idle window alloc_space churn_site $v"

# ---- delta_heap: since the previous request ----
fetch /debug/pprof/delta_heap
[ "$code" = 200 ] || fail "delta_heap: $code"
cp "$tmp/body" "$tmp/dh1.pb.gz"
total=$((100000 + 100000))
v=$(site_value "$tmp/dh1.pb.gz" alloc_space churn_site)
[ "$v" = $total ] && ok "first delta_heap: everything since start ($total)" || fail "first delta_heap churn_site $v, want $total"
cmd churn 10 4096
fetch /debug/pprof/delta_heap
cp "$tmp/body" "$tmp/dh2.pb.gz"
v=$(site_value "$tmp/dh2.pb.gz" alloc_space churn_site)
[ "$v" = 40960 ] && ok "second delta_heap: only what came since the first (40960)" || fail "second delta_heap churn_site $v, want 40960"
v=$(site_value "$tmp/dh2.pb.gz" inuse_space keep_site)
[ "$v" = 15000 ] && ok "delta_heap inuse_space absolute (15000)" || fail "delta_heap inuse keep_site $v"
fetch /debug/pprof/delta_heap
v=$(site_value "$tmp/body" alloc_space churn_site)
[ "$v" = 0 ] && ok "third delta_heap right after: 0" || fail "third delta_heap churn_site $v"

# the absolute allocs profile without prof_accum is unchanged: no alloc_* values
fetch /debug/pprof/allocs
v=$(site_value "$tmp/body" alloc_space churn_site)
[ "$v" = 0 ] && ok "plain /allocs without prof_accum: alloc_space 0 as before" || fail "plain allocs churn_site $v"

# ---- what heaptap does not serve, and bad windows ----
for p in goroutine block mutex threadcreate; do
	fetch /debug/pprof/$p
	[ "$code" = 404 ] && grep -q 'heap only' "$tmp/body" && ok "/debug/pprof/$p -> 404" || fail "/debug/pprof/$p: $code $(cat "$tmp/body")"
done
# /debug/pprof/profile is the CPU profiler's (docs/CPU.md, tests e2e/cpu_http); no tracer
fetch "/debug/pprof/trace?seconds=1"
[ "$code" = 501 ] && grep -q 'no tracer' "$tmp/body" && ok "/debug/pprof/trace -> 501" || fail "/debug/pprof/trace: $code $(cat "$tmp/body")"

for q in seconds=0 seconds=121 seconds=x "seconds=5&debug=1"; do
	fetch "/debug/pprof/heap?$q"
	[ "$code" = 400 ] && ok "heap?$q -> 400" || fail "heap?$q: $code"
done
# more windows than HTTP_DELTA_WINDOWS (4): the fifth is told to retry
cpids=
for i in 1 2 3 4; do curl -s -o /dev/null "$U/debug/pprof/heap?seconds=5" & cpids="$cpids $!"; done
wait_for 60 "curl -s '$U/metrics' | grep -q '^heaptap_delta_windows 4\$'" || fail "four windows did not open"
fetch "/debug/pprof/heap?seconds=5"
[ "$code" = 503 ] && [ "$(header Retry-After)" = 1 ] && ok "a fifth window -> 503 Retry-After" || fail "fifth window: $code"
wait $cpids

fleet_stop || fail "host exit status"
[ $fails -eq 0 ] && echo "all fleet pull checks passed"
exit $((fails > 0))
