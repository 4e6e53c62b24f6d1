#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sec_host_fds_push.sh - descriptors the collector keeps across calls are checked before each
# use (issue 14, item 1; lib/sys.h struct sys_fd): a host pushing profiles (push_url, every
# allocation sampled) closes every descriptor above 2 after the first push, the push client's
# memfd included, creates its own file and puts it on every number that was open (fleet_host
# hostfds), then allocates again. Asserted: the host's file holds exactly what the host wrote
# (before, the next push truncated it and wrote a profile into it), a push after that still
# arrives with the new allocations (the memfd was made anew), and the stats count the lost
# descriptor (fds_lost >= 1). Waits poll with generous bounds; nothing depends on timing.
set -u
for tool in curl python3; do
	command -v $tool >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
. "$(dirname "$0")/lib/http.sh"
. "$(dirname "$0")/lib/fleet.sh"
[ -x "$FLEET_PROG" ] || { echo "missing $FLEET_PROG (make progs)"; exit 1; }
STANDIN=$(dirname "$0")/lib/push_standin.py
spid=
stop_standin() { [ -n "$spid" ] && { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; }; spid=; }
trap 'stop_standin; cleanup' EXIT
dir=$tmp/push
mkdir -p "$dir"
python3 "$STANDIN" ingest "$dir" 2>"$dir/stderr" &
spid=$!
wait_for 30 "[ -s '$dir/port' ]" || { echo "stand-in did not start"; cat "$dir/stderr"; exit 1; }
sport=$(cat "$dir/port")
# received_after AFTER_NS: 0 when a profile taken after AFTER_NS has arrived
received_after() {
	python3 - "$dir" "$1" <<'PY'
import glob, json, sys
d, after = sys.argv[1], int(sys.argv[2])
for f in glob.glob(d + "/req-*.json"):
    if any(p["time_nanos"] > after for p in json.load(open(f))["profiles"]):
        sys.exit(0)
sys.exit(1)
PY
}

fleet_start "lg_prof_sample:0,push_url:http://127.0.0.1:$sport/ingest,push_interval:1s"
cmd keep 10 1000
wait_for 60 "ls '$dir'/req-*.json >/dev/null 2>&1" || { fail "nothing pushed"; exit 1; }
cmd hostfds "$tmp/hostfile"
took=$(sed -n 's/^took //p' "$tmp/out")
echo "the host took $took descriptor number(s) over"
[ "${took:-0}" -ge 1 ] || fail "the host found no collector descriptor to take over"
cmd churn 100 1000
wait_for 60 "received_after $acked_ns" && ok "a push after the host reused the descriptors" ||
	fail "no push after the host reused the descriptors"
cmd hostcheck "$tmp/hostfile"
grep -q '^host file intact$' "$tmp/out" && ok "the host's file is untouched" ||
	{ fail "the host's file was changed"; od -c "$tmp/hostfile" | head -5; }
[ "$(cat "$tmp/hostfile")" = "host data" ] || fail "the host's file holds $(wc -c <"$tmp/hostfile") bytes, not what the host wrote"
cmd stats
lost=$(python3 -c 'import json, sys
line = next(l for l in open(sys.argv[1]) if l.startswith("stats "))
print(json.loads(line.split(" ", 2)[2])["fds_lost"])' "$tmp/out" 2>/dev/null)
[ "${lost:-0}" -ge 1 ] 2>/dev/null && ok "fds_lost = $lost" || fail "fds_lost is '${lost}', want >= 1"
fleet_stop || fail "host exit status"
exit $((fails > 0))
