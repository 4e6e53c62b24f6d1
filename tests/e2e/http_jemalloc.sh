#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# http_jemalloc.sh - the HTTP control plane driving jemalloc's own profiler: the host runs with
# libheaptap.so (prof:false, HTTP on) above libjemalloc.so.2 (MALLOC_CONF=prof:true,
# prof_active:false). /memory-profiler/start switches prof.active on, the host then allocates
# 32 x 1 MiB from hog_alloc, /stop dumps through prof.dump, and /download/raw is a jemalloc
# heap_v2 dump in which stock jeprof finds hog_alloc on top with at least 20 MB (expected
# ~32 MB; 20 MB is more than 5 standard deviations below at R = 512 KiB).
set -u
B=${HEAPTAP_BUILD:-$ROOT/build}
PROG=$B/progs/http_host
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
for tool in curl python3 jeprof go; do
	command -v $tool >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
[ -f "$JE" ] || { echo "skip: $JE not installed"; exit 77; }
[ -x "$PROG" ] || { echo "missing $PROG (make progs)"; exit 1; }
. "$(dirname "$0")/lib/http.sh"
port=$(free_port)
U=http://127.0.0.1:$port

# no heaptap CLI for this host: download/text must say so
# http_dump_rate_ms:0: the steps below ask for dumps closer together than the default gate's
# one a second when the machine is quick (e2e/sec_http_odds tests the gate itself)
env -u HEAPTAP_CLI PATH=/usr/bin:/bin TMPDIR=$tmp HTTP_HOST_GO=$tmp/go MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:19 \
	HEAPTAP_CONF="http:127.0.0.1:$port,prof:false,http_dump_rate_ms:0" LD_PRELOAD=$HEAPTAP_LIB:$JE \
	"$PROG" "$tmp/stop" >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 100); do
	grep -q '^waiting' "$tmp/out" 2>/dev/null && curl -s -o /dev/null "$U/" && break
	sleep 0.1
done
grep -q '^waiting' "$tmp/out" || { echo "host did not start"; cat "$tmp/err"; exit 1; }

fetch /memory-profiler/state
[ "$(json 'j["memory_profiler"]["jemalloc_detected"], j["heaptap"]["backend"], j["jemalloc"]["profiling_enabled"], j["jemalloc"]["profiling_active"]')" = "True jemalloc True False" ] &&
	ok "state: jemalloc detected, backend jemalloc, prof.active false" || fail "state: $(cat "$tmp/body")"
fetch "/memory-profiler/start?duration=1mins"
[ "$code" = 200 ] && id=$(json 'j["id"]') && ok "start -> $code, id $id" || fail "start: $code $(cat "$tmp/body")"
fetch /memory-profiler/state
[ "$(json 'j["jemalloc"]["profiling_active"]')" = True ] || fail "prof.active not on after start: $(cat "$tmp/body")"

touch "$tmp/go"
for _ in $(seq 100); do grep -q '^ready' "$tmp/out" && break; sleep 0.1; done

fetch /memory-profiler/stop
[ "$code" = 200 ] && [ "$(json 'j["id"]')" = "$id" ] && ok "stop -> 200" || fail "stop: $code $(cat "$tmp/body")"
fetch /memory-profiler/state
[ "$(json 'j["jemalloc"]["profiling_active"]')" = False ] || fail "prof.active still on after stop"
fetch "/memory-profiler/download/raw?id=$id"
[ "$code" = 200 ] && head -n 1 "$tmp/body" | grep -q '^heap_v2/524288$' && ok "download/raw is jemalloc heap_v2/524288" ||
	fail "download/raw: $code $(head -c 200 "$tmp/body")"
cp "$tmp/body" "$tmp/raw.heap"
mkdir -p "$tmp/jeprof"
JEPROF_TMPDIR=$tmp/jeprof jeprof --text "$PROG" "$tmp/raw.heap" >"$tmp/jl" 2>"$tmp/jl.err"
read -r mb top < <(awk '/^ *[0-9.]+ +[0-9.]+%/{print $1, $NF; exit}' "$tmp/jl")
if [ "${top:-}" = hog_alloc ] && python3 -c "import sys; sys.exit(0 if ${mb:-0} >= 20.0 else 1)"; then
	ok "jeprof --text: hog_alloc on top with $mb MB"
else
	fail "jeprof top '${top:-}' with ${mb:-?} MB"; head -15 "$tmp/jl" "$tmp/jl.err"
fi

fetch "/memory-profiler/download/text?id=$id"
[ "$code" = 400 ] && grep -qx 'Could not generate file: heaptap CLI not found on PATH.' "$tmp/body" &&
	ok "download/text without a CLI -> 400 'Could not generate file: heaptap CLI not found on PATH.'" ||
	fail "download/text without a CLI: $code $(cat "$tmp/body")"
fetch /pprof/heap
head -n 1 "$tmp/body" | grep -q '^heap_v2/' && ok "/pprof/heap served by prof.dump" || fail "/pprof/heap: $(head -c 200 "$tmp/body")"
fetch /memory-profiler/statistics
[ "$(json '"version" in j["jemalloc"]')" = True ] && ok "statistics is malloc_stats_print JSON" || fail "statistics: $(head -c 200 "$tmp/body")"
fetch /debug/pprof/heap
if [ "$code" = 200 ] && HOME=$tmp go tool pprof -symbolize=remote -top -sample_index=inuse_space "$U/debug/pprof/heap" >"$tmp/go" 2>&1 &&
	awk '/^ *flat/{getline; print $6; exit}' "$tmp/go" | grep -qx hog_alloc; then
	ok "/debug/pprof/heap with the jemalloc backend: pprof, hog_alloc on top (libjemalloc's frames dropped)"
else
	fail "/debug/pprof/heap with the jemalloc backend: $code"; head -12 "$tmp/go"
fi
fetch "/heaptap/active?on=1"
[ "$(json 'j["active"], j["backend"]')" = "True jemalloc" ] || fail "heaptap/active?on=1: $(cat "$tmp/body")"
fetch "/memory-profiler/start?duration=5mins"
[ "$code" = 409 ] && grep -qx 'Heap profiling was started externally.' "$tmp/body" && ok "start while prof.active was set elsewhere -> 409" ||
	fail "start after external activation: $code $(cat "$tmp/body")"
fetch "/heaptap/active?on=0"
fetch /heaptap/dump
f=$(json 'j["file"]')
[ -s "$f" ] && head -n 1 "$f" | grep -q '^heap_v2/' && ok "heaptap/dump via prof.dump: $f" || fail "heaptap/dump: $(cat "$tmp/body")"

touch "$tmp/stop"
wait "$pid"
rc=$?
pid=
[ $rc = 0 ] || fail "host exited with $rc"
echo "$fails failures"
[ $fails = 0 ]
