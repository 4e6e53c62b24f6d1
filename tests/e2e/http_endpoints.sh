#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# http_endpoints.sh - the collector's HTTP control plane end to end: a real program
# (build/progs/http_host: 32 MiB live from hog_alloc, 1 MiB from small_alloc) runs under
# LD_PRELOAD with HEAPTAP_CONF=http:127.0.0.1:<port>; every endpoint is fetched with curl and
# its status, headers and body checked; stock jeprof (local and remote symbols) and
# go tool pprof (remote symbols) must name hog_alloc as the top function; then the port-taken
# message, heaptap_http_start's return codes and the forked child's sockets.
set -u
B=${HEAPTAP_BUILD:-$ROOT/build}
PROG=$B/progs/http_host
for tool in curl python3; do
	command -v $tool >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
[ -x "$PROG" ] || { echo "missing $PROG (make progs)"; exit 1; }
. "$(dirname "$0")/lib/http.sh"
port=$(free_port)
U=http://127.0.0.1:$port

expect_code() { # want, what
	if [ "$code" = "$1" ]; then ok "$2 -> $code"; else fail "$2: status $code, want $1: $(head -c 300 "$tmp/body")"; fi
}

mkdir -p "$tmp/dumps"
portc=$(free_port)
# the CLI behind download/text|graph, slowed down so the test can see the server keep serving
printf '#!/bin/sh\nsleep 2\nexec "%s" "$@"\n' "$HEAPTAP_PLAIN" >"$tmp/slowcli"
chmod +x "$tmp/slowcli"
# http_dump_rate_ms:0: the steps below ask for dumps closer together than the default gate's
# one a second when the machine is quick (e2e/sec_http_odds tests the gate itself)
TMPDIR=$tmp HTTP_HOST_CHILD_ADDR=127.0.0.1:$portc HEAPTAP_CLI=$tmp/slowcli HEAPTAP_CONF="http:127.0.0.1:$port,prof_prefix:$tmp/dumps/hp,prof_final:false,prof_accum:true,http_dump_rate_ms:0" \
	LD_PRELOAD=$HEAPTAP_LIB "$PROG" "$tmp/stop" >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 100); do
	grep -q '^ready' "$tmp/out" 2>/dev/null && curl -s -o /dev/null "$U/" && break
	sleep 0.1
done
grep -q '^ready' "$tmp/out" || { echo "host did not start"; cat "$tmp/err"; exit 1; }
child=$(awk '/^ready/{print $2}' "$tmp/out")

# ---- index ----
fetch /
expect_code 200 "GET /"
grep -q '/pprof/heap' "$tmp/body" && grep -q '/memory-profiler/start' "$tmp/body" || fail "index lacks endpoints"
[ "$(header X-Content-Type-Options)" = nosniff ] || fail "no nosniff header"
[ "$(header Content-Length)" = "$(stat -c %s "$tmp/body")" ] || fail "Content-Length differs from the body"
fetch /nowhere
expect_code 404 "unknown path"

# ---- jeprof endpoints ----
fetch /pprof/heap
expect_code 200 "GET /pprof/heap"
head -n 1 "$tmp/body" | grep -q '^heap_v2/524288$' || fail "/pprof/heap is not heap_v2/524288: $(head -n 1 "$tmp/body")"
grep -q '^MAPPED_LIBRARIES:' "$tmp/body" || fail "/pprof/heap has no MAPPED_LIBRARIES"
fetch /pprof/symbol
expect_code 200 "GET /pprof/symbol"
[ "$(cat "$tmp/body")" = "num_symbols: 1" ] || fail "GET /pprof/symbol: $(cat "$tmp/body")"
fetch /pprof/symbol -I
expect_code 200 "HEAD /pprof/symbol"
# with -I curl writes the head to both files: nothing may follow it
[ "$(header Content-Length)" = 15 ] && cmp -s "$tmp/body" "$tmp/hdr" || fail "HEAD: Content-Length $(header Content-Length), $(stat -c %s "$tmp/body") bytes"

# address of hog_alloc+4 in the running (PIE) program: load base + symbol value
base=$(awk -v p="$(readlink -f "$PROG")" '$6 == p && $3 == "00000000" {print $1; exit}' /proc/$pid/maps | cut -d- -f1)
sym=$(nm "$PROG" | awk '$3 == "hog_alloc" {print $1}')
addr=$(printf '%x' $((0x$base + 0x$sym + 4)))
padded=$(printf '%016x' $((0x$addr)))
upper=$(echo "$addr" | tr a-f A-F)
printf '0x%s+0x%s+0x1+0x%s' "$padded" "$addr" "$upper" >"$tmp/req"
fetch /pprof/symbol --data-binary @"$tmp/req"
expect_code 200 "POST /pprof/symbol"
printf '0x%s hog_alloc\n0x%s hog_alloc\n0x%s hog_alloc\n' "$padded" "$addr" "$addr" >"$tmp/want"
cmp -s "$tmp/body" "$tmp/want" && ok "symbol replies echo each address as sent, lowercase" ||
	{ fail "POST /pprof/symbol reply:"; cat "$tmp/body"; echo "want:"; cat "$tmp/want"; }
# a big, form-encoded body (jeprof's curl -d @file; > 1 MiB so curl sends Expect: 100-continue)
python3 -c "print('+'.join('0x%016x' % (0x$addr + (i % 2)) for i in range(120000)), end='')" >"$tmp/big"
fetch /pprof/symbol -d @"$tmp/big"
expect_code 200 "POST /pprof/symbol with $(stat -c %s "$tmp/big") bytes"
n=$(grep -c ' hog_alloc$' "$tmp/body")
[ "$n" = 120000 ] || fail "big symbol request resolved $n of 120000"
fetch "/debug/pprof/symbol?0x$addr+0x1"
[ "$(cat "$tmp/body")" = "0x$addr hog_alloc" ] || fail "GET symbol with a query: $(cat "$tmp/body")"

fetch /pprof/cmdline
expect_code 200 "GET /pprof/cmdline"
[ "$(head -n 1 "$tmp/body")" = "$(readlink -f "$PROG")" ] || fail "cmdline first line: $(head -n 1 "$tmp/body")"
[ "$(sed -n 2p "$tmp/body")" = "$tmp/stop" ] || fail "cmdline second line: $(sed -n 2p "$tmp/body")"
fetch /debug/pprof/cmdline
[ "$(tr '\0' ' ' <"$tmp/body")" = "$PROG $tmp/stop" ] || fail "go cmdline: $(tr '\0' ' ' <"$tmp/body")"

# stock jeprof, local and remote symbolization
if command -v jeprof >/dev/null; then
	mkdir -p "$tmp/jeprof"
	JEPROF_TMPDIR=$tmp/jeprof jeprof --text "$PROG" "$U/pprof/heap" >"$tmp/jl" 2>"$tmp/jl.err"
	top=$(awk '/^ *[0-9.]+ +[0-9.]+%/{print $NF; exit}' "$tmp/jl")
	[ "$top" = hog_alloc ] && ok "jeprof --text PROG URL: top is hog_alloc" || { fail "jeprof local top '$top'"; head -20 "$tmp/jl" "$tmp/jl.err"; }
	JEPROF_TMPDIR=$tmp/jeprof jeprof --text "$U/pprof/heap" >"$tmp/jr" 2>"$tmp/jr.err"
	top=$(awk '/^ *[0-9.]+ +[0-9.]+%/{print $NF; exit}' "$tmp/jr")
	[ "$top" = hog_alloc ] && ok "jeprof --text URL (remote symbols): top is hog_alloc" || { fail "jeprof remote top '$top'"; head -20 "$tmp/jr" "$tmp/jr.err"; }
	# --retain/--exclude ride on the symbol request's query; a regex may start with '/'
	JEPROF_TMPDIR=$tmp/jeprof jeprof --text --retain='/?hog_' "$U/pprof/heap" >"$tmp/jt" 2>"$tmp/jt.err"
	n=$(awk '/^ *[0-9.]+ +[0-9.]+%/' "$tmp/jt" | wc -l)
	top=$(awk '/^ *[0-9.]+ +[0-9.]+%/{print $NF; exit}' "$tmp/jt")
	[ "$top" = hog_alloc ] && [ "$n" = 1 ] && ok "jeprof --retain='/?hog_' URL: only hog_alloc" || { fail "jeprof --retain: top '$top', $n lines"; head -20 "$tmp/jt" "$tmp/jt.err"; }
	# Databend's form: no page in the URL, jeprof asks <base>/pprof/profile?seconds=30
	JEPROF_TMPDIR=$tmp/jeprof jeprof --text "$PROG" "$U/debug/mem" >"$tmp/jd" 2>"$tmp/jd.err"
	top=$(awk '/^ *[0-9.]+ +[0-9.]+%/{print $NF; exit}' "$tmp/jd")
	[ "$top" = hog_alloc ] && ok "jeprof --text PROG URL/debug/mem (Databend route): top is hog_alloc" || { fail "jeprof databend top '$top'"; head -20 "$tmp/jd" "$tmp/jd.err"; }
else
	echo "note: jeprof not installed, its checks skipped"
fi

# ---- Go endpoints ----
fetch /debug/pprof/heap
expect_code 200 "GET /debug/pprof/heap"
[ "$(header Content-Type)" = application/octet-stream ] || fail "heap Content-Type $(header Content-Type)"
[ "$(header Content-Disposition)" = 'attachment; filename="heap"' ] || fail "heap Content-Disposition $(header Content-Disposition)"
[ "$(head -c 2 "$tmp/body" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "heap body is not gzip"
fetch /debug/pprof/allocs
[ "$code" = 200 ] && [ "$(header Content-Disposition)" = 'attachment; filename="allocs"' ] || fail "allocs: $code $(header Content-Disposition)"
fetch "/debug/pprof/heap?debug=1&gc=1"
expect_code 200 "GET /debug/pprof/heap?debug=1"
head -n 1 "$tmp/body" | grep -q '^heap profile: ' || fail "debug=1 is not legacy text: $(head -n 1 "$tmp/body")"
fetch "/debug/pprof/heap?seconds=abc"
expect_code 400 "seconds=abc"
grep -qx 'invalid value for "seconds" - must be a positive integer' "$tmp/body" && [ "$(header X-Go-Pprof)" = 1 ] || fail "seconds=abc reply: $(cat "$tmp/body")"
fetch "/debug/pprof/heap?seconds=5&debug=1"
grep -qx 'seconds and debug params are incompatible' "$tmp/body" || fail "seconds+debug reply: $(cat "$tmp/body")"
fetch /debug/pprof/goroutine
expect_code 404 "/debug/pprof/goroutine"
grep -q '^Unknown profile: heaptap profiles the heap only' "$tmp/body" || fail "unknown profile body: $(cat "$tmp/body")"
fetch /debug/pprof/
expect_code 200 "/debug/pprof/ index"
grep -q "heap?debug=1" "$tmp/body" || fail "index has no heap link"
if command -v go >/dev/null; then
	PPROF_TMPDIR=$tmp HOME=$tmp go tool pprof -symbolize=remote -top "$U/debug/pprof/heap" >"$tmp/go" 2>"$tmp/go.err"
	top=$(awk '/^ *[0-9.]+[kMG]?B? +[0-9.]+%/{print $NF; exit}' "$tmp/go")
	[ "$top" = hog_alloc ] && ok "go tool pprof -symbolize=remote: top is hog_alloc" || { fail "go tool pprof top '$top'"; head -20 "$tmp/go" "$tmp/go.err"; }
	PPROF_TMPDIR=$tmp HOME=$tmp go tool pprof -symbolize=remote -top "$U/debug/pprof/allocs" >"$tmp/go" 2>"$tmp/go.err"
	top=$(awk '/^ *[0-9.]+[kMG]?B? +[0-9.]+%/{print $NF; exit}' "$tmp/go")
	grep -q '^Type: alloc_space$' "$tmp/go" && [ "$top" = hog_alloc ] && ok "go tool pprof allocs: Type alloc_space, top hog_alloc" ||
		{ fail "go tool pprof allocs: top '$top'"; head -20 "$tmp/go" "$tmp/go.err"; }
else
	echo "note: go not installed, its check skipped"
fi

# ---- heaptap's own ----
fetch /heaptap/stats
expect_code 200 "/heaptap/stats"
[ "$(json 'type(j).__name__')" = dict ] || fail "stats is not a JSON object: $(head -c 200 "$tmp/body")"
fetch /heaptap/dump -X POST
expect_code 200 "POST /heaptap/dump"
f=$(json 'j["file"]')
[ -f "$f" ] && head -n 1 "$f" | grep -q '^heap_v2/' && ok "dump file $f" || fail "dump file '$f' missing or not heap_v2"
fetch "/heaptap/active?on=0"
[ "$(json 'j["active"], j["previous"]')" = "False True" ] || fail "active?on=0: $(cat "$tmp/body")"
fetch "/heaptap/active?on=1"
[ "$(json 'j["active"], j["previous"]')" = "True False" ] || fail "active?on=1: $(cat "$tmp/body")"
fetch "/heaptap/active?on=maybe"
expect_code 400 "active?on=maybe"

# ---- Mesos ----
fetch /memory-profiler/stop
expect_code 400 "stop before any run"
grep -qx 'Not yet generated.' "$tmp/body" || fail "stop before a run: $(cat "$tmp/body")"
fetch /memory-profiler/download/raw
expect_code 400 "download before any run"
grep -qx 'No heap profile exists: Not yet generated.' "$tmp/body" || fail "download before a run: $(cat "$tmp/body")"
fetch "/memory-profiler/start?duration=600"
expect_code 400 "start?duration=600 (bare number)"
grep -q "^Could not parse parameter 'duration'" "$tmp/body" || fail "bare duration: $(cat "$tmp/body")"
fetch "/memory-profiler/start?duration=2days"
grep -qx "Duration '2days' must be between 1secs and 1days." "$tmp/body" || fail "2days: $(cat "$tmp/body")"
fetch "/memory-profiler/start?duration=5mins"
expect_code 200 "start?duration=5mins"
id=$(json 'j["id"]')
[ "$(json 'type(j["id"]).__name__, j["remaining_seconds"]')" = "int 300" ] || fail "start JSON types: $(cat "$tmp/body")"
json 'j["message"]' | grep -q '^Successfully started new heap profiling run.' || fail "start message"
fetch "/memory-profiler/start?duration=5mins"
json 'j["message"]' | grep -q '^Heap profiling is already active.' || fail "second start message: $(cat "$tmp/body")"
fetch /memory-profiler/state
[ "$(json 'j["memory_profiler"]["current_run"]["id"]')" = "$id" ] || fail "state: $(cat "$tmp/body")"
fetch /memory-profiler/download/raw
expect_code 400 "download without id during a run"
fetch /memory-profiler/statistics
[ "$(json 'type(j).__name__')" = dict ] || fail "statistics is not JSON: $(head -c 200 "$tmp/body")"
fetch /memory-profiler/stop
expect_code 200 "stop"
[ "$(json 'j["id"], type(j["id"]).__name__')" = "$id str" ] || fail "stop JSON: $(cat "$tmp/body")"
[ "$(json 'j["url_raw_profile"]')" = "/memory-profiler/download/raw?id=$id" ] || fail "stop url_raw_profile"
fetch "/memory-profiler/download/raw?id=$id"
expect_code 200 "download/raw?id=$id"
head -n 1 "$tmp/body" | grep -q '^heap_v2/' || fail "raw download is not heap_v2"
header Content-Disposition | grep -q '^attachment; filename=/.*/heaptap\.[0-9]*\..*/profile\.dump$' || fail "raw Content-Disposition: $(header Content-Disposition)"
cp "$tmp/body" "$tmp/raw.heap"
fetch "/memory-profiler/download/raw?id=123"
grep -qx "Cannot serve requested id #123." "$tmp/body" || fail "wrong id: $(cat "$tmp/body")"
fetch "/memory-profiler/download/raw?id=12x"
grep -q "^Invalid parameter 'id'" "$tmp/body" || fail "bad id: $(cat "$tmp/body")"
# the text is rendered by a child process; meanwhile other requests are answered
curl -s -o "$tmp/text" "$U/memory-profiler/download/text?id=$id" &
textpid=$!
for _ in $(seq 100); do ls "$tmp"/heaptap.*/symbolized-profile.dump.tmp >/dev/null 2>&1 && break; sleep 0.05; done
t0=$(date +%s%N)
fetch /pprof/symbol
t1=$(date +%s%N)
if [ "$code" = 200 ] && kill -0 $textpid 2>/dev/null; then
	ok "served /pprof/symbol in $(((t1 - t0) / 1000000)) ms while the CLI renders the text"
else
	fail "no answer while the CLI runs (code $code)"
fi
wait $textpid
cp "$tmp/text" "$tmp/body"
grep -q 'hog_alloc' "$tmp/body" || fail "text download lacks hog_alloc: $(head -5 "$tmp/body")"
fetch "/memory-profiler/download/text?id=$id"
expect_code 200 "download/text again (cached)"
grep -q 'hog_alloc' "$tmp/body" || fail "text download lacks hog_alloc: $(head -5 "$tmp/body")"
fetch "/memory-profiler/download/graph?id=$id"
expect_code 200 "download/graph (heaptap callgraph --format=svg)"
grep -q '<svg' "$tmp/body" || fail "graph download is not SVG: $(head -c 200 "$tmp/body")"
fetch "/memory-profiler/start?duration=1secs"
expect_code 200 "start?duration=1secs"
id2=$(json 'j["id"]')
sleep 1.2
for _ in $(seq 50); do # ends by itself after 1 s (polled: a stalled runner needs longer)
	fetch /memory-profiler/state
	[ "$(json 'j["memory_profiler"]["current_run"]["remaining_seconds"]')" = 0 ] && break
	sleep 0.2
done
[ "$(json 'j["memory_profiler"]["current_run"]["remaining_seconds"]')" = 0 ] || fail "run did not end by itself: $(cat "$tmp/body")"
fetch "/memory-profiler/download/raw?id=$id2"
expect_code 200 "download of the timed run"
fetch "/heaptap/active?on=1"

# ---- heaptap_http_start, port taken, fork ----
HEAPTAP_CONF="http:127.0.0.1:$port" LD_PRELOAD=$HEAPTAP_LIB "$PROG" "$tmp/stop2" >"$tmp/out2" 2>"$tmp/err2" &
p2=$!
for _ in $(seq 50); do grep -q '^ready' "$tmp/out2" && break; sleep 0.1; done
touch "$tmp/stop2"
wait $p2
rc=$?
grep -q "^heaptap: http: cannot listen on 127.0.0.1:$port: Address already in use (another process holds it" "$tmp/err2" && [ $rc = 0 ] &&
	ok "port taken: one stderr line, host ran on" || { fail "port taken (rc $rc):"; cat "$tmp/err2"; }
port3=$(free_port)
HEAPTAP_CONF="prof_final:false" LD_PRELOAD=$HEAPTAP_LIB "$PROG" "$tmp/stop3" "127.0.0.1:$port3" >"$tmp/out3" 2>"$tmp/err3" &
p3=$!
for _ in $(seq 50); do grep -q '^ready' "$tmp/out3" && break; sleep 0.1; done
[ "$(grep '^api' "$tmp/out3" | tr '\n' ' ')" = "api 0 api -114 " ] || fail "heaptap_http_start twice: $(grep '^api' "$tmp/out3" | tr '\n' ' ')"
c3=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port3/pprof/symbol")
[ "$c3" = 200 ] && ok "server started by heaptap_http_start answers" || fail "API-started server: $c3"
touch "$tmp/stop3"
wait $p3
HEAPTAP_CONF="prof_final:false" LD_PRELOAD=$HEAPTAP_LIB "$PROG" "$tmp/stop3" "127.0.0.1:$port" >"$tmp/out4" 2>/dev/null
[ "$(grep '^api' "$tmp/out4" | head -n 1)" = "api -98" ] || fail "heaptap_http_start on a taken port: $(grep '^api' "$tmp/out4" | head -n 1)"

# the forked child inherits no server: its only listening socket is the one it opened itself
# with heaptap_http_start (which would have said -EALREADY had the parent's state leaked in)
grep -qx 'child api 0' "$tmp/out" || fail "child's heaptap_http_start: $(grep '^child' "$tmp/out")"
listen=$(python3 - "$child" <<'PY'
import os, sys
pid = sys.argv[1]
inodes = set()
for fd in os.listdir("/proc/%s/fd" % pid):
    try:
        t = os.readlink("/proc/%s/fd/%s" % (pid, fd))
    except OSError:
        continue
    if t.startswith("socket:["):
        inodes.add(t[8:-1])
ports = []
for line in open("/proc/%s/net/tcp" % pid).readlines()[1:]:
    f = line.split()
    if f[3] == "0A" and f[9] in inodes:
        ports.append(int(f[1].split(":")[1], 16))
print(" ".join(str(p) for p in sorted(ports)), "sockets=%d" % len(inodes))
PY
)
[ "$listen" = "$portc sockets=1" ] && ok "forked child: no inherited sockets, its own server on $portc" || fail "forked child listens on '$listen', want '$portc sockets=1'"
[ "$(curl -s "http://127.0.0.1:$portc/pprof/symbol")" = "num_symbols: 1" ] || fail "child's own server does not answer"

touch "$tmp/stop"
wait "$pid"
rc=$?
pid=
[ $rc = 0 ] || fail "host exited with $rc"
grep -v '^$' "$tmp/err" | grep -q . && { echo "host stderr:"; cat "$tmp/err"; }
echo "$fails failures"
[ $fails = 0 ]
