#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# fleet_metrics.sh - /metrics: promtool check metrics finds nothing to object to; the figures
# are right for fleet_host with every allocation sampled (live bytes exactly what it keeps
# plus its stdio buffers, as the statistics JSON says; samples and allocated bytes grow by
# what it is told to allocate); then a real Prometheus server (Debian's prometheus package)
# scrapes the profiled program and its API answers heaptap_heap_live_bytes with the value
# /metrics shows. The CPU profiler's heaptap_cpu_* counters are listed (0 here). Polls with
# generous bounds; nothing depends on timing.
set -u
for tool in curl python3 promtool prometheus; do
	command -v $tool >/dev/null || { echo "skip: $tool not installed (scripts/deps.sh check)"; exit 77; }
done
. "$(dirname "$0")/lib/http.sh"
. "$(dirname "$0")/lib/fleet.sh"
[ -x "$FLEET_PROG" ] || { echo "missing $FLEET_PROG (make progs)"; exit 1; }
port=$(free_port)
U=http://127.0.0.1:$port
fleet_start "http:127.0.0.1:$port,lg_prof_sample:0"
metric() { # NAME[{labels}] -> value from the last $tmp/body
	awk -v n="$1" '$1 == n { print $2; exit }' "$tmp/body"
}

cmd keep 1 16
fetch /metrics
[ "$code" = 200 ] || fail "/metrics: $code"
[ "$(header Content-Type)" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "Content-Type $(header Content-Type)"
promtool check metrics <"$tmp/body" >"$tmp/lint" 2>&1 && ok "promtool check metrics: clean" || { fail "promtool:"; cat "$tmp/lint"; }
for m in heaptap_heap_live_bytes heaptap_heap_peak_bytes heaptap_allocated_bytes_total heaptap_samples_total \
	'heaptap_dropped_samples_total{reason="stack_table_full"}' 'heaptap_dumps_total{kind="manual"}' \
	heaptap_push_errors_total process_resident_memory_bytes; do
	[ -n "$(metric "$m")" ] && ok "$m = $(metric "$m")" || fail "$m missing"
done
# the CPU profiler's counters are there (zero: no CPU profile runs here)
for m in heaptap_cpu_samples_total 'heaptap_cpu_samples_lost_total{reason="buffer_full"}' \
	'heaptap_cpu_samples_lost_total{reason="in_heaptap"}' heaptap_cpu_unwind_failed_total heaptap_cpu_threads_armed \
	heaptap_cpu_profiles_written_total heaptap_cpu_profile_write_errors_total; do
	[ "$(metric "$m")" = 0 ] && ok "$m = 0" || fail "$m: '$(metric "$m")', expected 0"
done
grep -q '^# TYPE heaptap_allocated_bytes_total counter$' "$tmp/body" && grep -q '^# TYPE heaptap_heap_live_bytes gauge$' "$tmp/body" || fail "TYPE lines"
live0=$(metric heaptap_heap_live_bytes) samples0=$(metric heaptap_samples_total) alloc0=$(metric heaptap_allocated_bytes_total)

cmd keep 1000 1000
cmd churn 500 100
fetch /metrics
live1=$(metric heaptap_heap_live_bytes) samples1=$(metric heaptap_samples_total) alloc1=$(metric heaptap_allocated_bytes_total)
[ $((live1 - live0)) = 1000000 ] && ok "live grew by exactly the 1000 x 1000 kept" || fail "live grew by $((live1 - live0)), want 1000000"
[ $((samples1 - samples0)) = 1500 ] && ok "1500 more samples" || fail "samples grew by $((samples1 - samples0)), want 1500"
[ $((alloc1 - alloc0)) -ge 1050000 ] && ok "allocated grew by >= 1050000 ($((alloc1 - alloc0)))" || fail "allocated grew by $((alloc1 - alloc0))"
fetch /heaptap/stats
[ "$(json "j['live_bytes_estimate']")" = "$live1" ] && ok "live bytes as in the statistics JSON" || fail "stats live $(json "j['live_bytes_estimate']") vs $live1"
fetch /metrics
peak=$(metric heaptap_heap_peak_bytes)
[ "$peak" -ge "$live1" ] || fail "peak $peak < live $live1"

# ---- a real Prometheus scrapes it ----
pport=$(free_port)
cat >"$tmp/prom.yml" <<EOC
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: heaptap
    static_configs:
      - targets: ['127.0.0.1:$port']
EOC
promtool check config "$tmp/prom.yml" >/dev/null 2>&1 || fail "promtool check config"
prometheus --config.file="$tmp/prom.yml" --storage.tsdb.path="$tmp/tsdb" --web.listen-address="127.0.0.1:$pport" \
	>"$tmp/prom.log" 2>&1 &
ppid_=$!
P=http://127.0.0.1:$pport
q() { curl -s -G "$P/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")' 2>/dev/null; }
got=
for _ in $(seq 600); do
	got=$(q 'heaptap_heap_live_bytes{job="heaptap"}')
	[ "$got" = "$live1" ] && break
	sleep 0.2
done
[ "$got" = "$live1" ] && ok "Prometheus's API: heaptap_heap_live_bytes = $got" || { fail "Prometheus answered '$got', want $live1"; tail -20 "$tmp/prom.log"; }
up=$(q 'up{job="heaptap"}')
[ "$up" = 1 ] && ok "the target is up" || fail "up = '$up'"
h=$(curl -s "$P/api/v1/targets" | python3 -c 'import json,sys; t=json.load(sys.stdin)["data"]["activeTargets"]; print(t[0]["health"], t[0]["lastError"])')
[ "$h" = "up " ] || fail "target health: $h"
kill $ppid_ 2>/dev/null
wait $ppid_ 2>/dev/null

fleet_stop || fail "host exit status"
[ $fails -eq 0 ] && echo "all metrics checks passed"
exit $((fails > 0))
