#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_push.sh - `heaptap push` uploads existing dumps to the loopback stand-ins of each backend
# (lib/push_standin.py rejects what the real servers reject): Pyroscope /ingest raw and
# multipart, Pyroscope's Connect API, Parca's writeraw. Inputs: a heaptap dump and a dump of
# jemalloc's own profiler of the demo program (every allocation sampled, so open_session holds
# exactly 60,000 x 128 = 7,680,000 bytes). Every received payload must read in go tool pprof,
# named without symbolizing again (heaptap symbolized it), with that exact value; labels carry
# service_name (the program's name, or --service), pid and the user's --label; the profile's
# time is the dump's; Parca gets inuse_* without a duration and alloc_* with one. Auth and
# tenant headers reach the server; a refusal, an unreachable URL, a bad dialect, an https URL
# and a corrupt profile fail with a clear message and a non-zero status.
. "$(dirname "$0")/lib/test.sh"
export PATH="/usr/lib/go/bin:$PATH"
HEAPTAP_LIB=${HEAPTAP_LIB:-$ROOT/build/libheaptap.so}
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
BIN=$ROOT/build/examples/leaky
STANDIN=$ROOT/tests/e2e/lib/push_standin.py
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
command -v go >/dev/null || { echo "skip: go not installed"; exit 77; }
[ -f "$JE" ] || { echo "skip: $JE is not installed"; exit 77; }
[ -x "$BIN" ] || { echo "FAIL: $BIN is not built (make progs)"; exit 1; }
[ -f "$HEAPTAP_LIB" ] || { echo "FAIL: $HEAPTAP_LIB is not built"; exit 1; }
spid=
stop_standin() { [ -n "$spid" ] && { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; }; spid=; }
trap 'stop_standin; rm -rf "$TMP"' EXIT
bad() { echo "FAIL[$1]"; fail=1; }

# standin MODE DIR [ARGS...]: starts the stand-in; $sport is its port
standin() {
	local mode=$1 dir=$2 i
	shift 2
	mkdir -p "$dir"
	python3 "$STANDIN" "$mode" "$dir" "$@" 2>"$dir/stderr" &
	spid=$!
	for ((i = 0; i < 300; i++)); do [ -s "$dir/port" ] && break; sleep 0.1; done
	[ -s "$dir/port" ] || { echo "FAIL: the stand-in did not start"; cat "$dir/stderr"; exit 1; }
	sport=$(cat "$dir/port")
}
# site FILE SAMPLE_INDEX: open_session's flat value in bytes, from the payload alone
site() {
	go tool pprof -top -nodecount=100 -sample_index="$2" -unit=B -symbolize=none "$1" 2>/dev/null |
		awk '$NF == "open_session" { v = $1; sub(/B$/, "", v); print v; f = 1; exit } END { if (!f) print "none" }'
}
# meta DIR EXPR: a Python expression over r (the stand-in's req-1.json)
meta() { python3 -c "import json; r=json.load(open('$1/req-1.json')); print($2)"; }

# ---- the dumps ----
mkdir -p "$TMP/h" "$TMP/je"
(cd "$TMP/h" && HEAPTAP_CONF=prof_prefix:$TMP/h/heaptap,lg_prof_sample:0,prof_accum:true LD_PRELOAD=$HEAPTAP_LIB "$BIN" >/dev/null) ||
	{ echo "FAIL: leaky under the collector"; exit 1; }
(cd "$TMP/je" && LD_PRELOAD=$JE MALLOC_CONF=prof:true,prof_final:true,prof_accum:true,lg_prof_sample:0 "$BIN" >/dev/null) ||
	{ echo "FAIL: leaky under jemalloc"; exit 1; }
H=$(ls "$TMP"/h/heaptap.*.f.heap 2>/dev/null | head -n 1)
J=$(ls "$TMP"/je/jeprof.*.f.heap 2>/dev/null | head -n 1)
[ -n "$H" ] && [ -n "$J" ] || { echo "FAIL: missing dumps: '$H' '$J'"; exit 1; }
hpid=$(echo "$H" | sed 's/.*heaptap\.\([0-9]*\)\..*/\1/')
jtime=$(stat -c %Y "$J")

# ---- every dialect, both dumps ----
# push_ok NAME MODE PATH DUMP [PUSH ARGS...]
push_ok() {
	local name=$1 mode=$2 path=$3 dump=$4 dir=$TMP/$1
	shift 4
	standin "$mode" "$dir"
	"$HEAPTAP" push --url "http://127.0.0.1:$sport$path" --label env=test "$@" "$dump" >"$dir/out" 2>"$dir/err"
	local rc=$?
	stop_standin
	[ $rc -eq 0 ] || { bad "$name: exit $rc: $(cat "$dir/err")"; return; }
	[ -s "$dir/refused.log" ] && { bad "$name: the stand-in refused: $(cat "$dir/refused.log")"; return; }
	[ -f "$dir/req-1.json" ] || { bad "$name: nothing received"; return; }
	grep -q "^pushed $dump to http://127.0.0.1:$sport$path" "$dir/out" || bad "$name: no 'pushed' line: $(cat "$dir/out")"
	local f k=0 v want
	for f in $(meta "$dir" "' '.join(p['file'] for p in r['profiles'])"); do
		if [ "$mode" = parca ] && [ $k -eq 1 ]; then
			want=alloc_space
		else
			want=inuse_space
		fi
		v=$(site "$f" "$want")
		[ "$v" = 7680000 ] && echo "ok[$name: payload $k reads in go tool pprof, open_session $want = $v B]" ||
			bad "$name: payload $k: open_session $want = '$v' B, want 7680000"
		k=$((k + 1))
	done
	[ "$(meta "$dir" "r['labels'].get('env')")" = test ] || bad "$name: user label: $(meta "$dir" "r['labels']")"
}

for dump in H J; do
	d=${!dump}
	push_ok "$dump-ingest" ingest /ingest "$d"
	push_ok "$dump-multipart" ingest /ingest "$d" --format ingest-multipart
	push_ok "$dump-connect" connect /push.v1.PusherService/Push "$d" --service checkout
	push_ok "$dump-parca" parca /profiles/writeraw "$d" "$BIN"
done
# labels: the program's name by default, --service when given; the dump's pid
check "service_name from the dump" leaky "$(meta "$TMP/H-ingest" "r['labels']['service_name']")"
check "service_name of the jemalloc dump" leaky "$(meta "$TMP/J-ingest" "r['labels']['service_name']")"
check "--service" checkout "$(meta "$TMP/J-connect" "r['labels']['service_name']")"
check "__name__ (connect)" memory "$(meta "$TMP/H-connect" "r['labels']['__name__']")"
check "pid label of a heaptap dump" "$hpid" "$(meta "$TMP/H-ingest" "r['labels'].get('pid')")"
# the jemalloc dump has no time of its own: the file's
check "time of the jemalloc dump" "$jtime" "$(meta "$TMP/J-ingest" "r['profiles'][0]['time_nanos'] // 10**9")"
# Parca: two profiles, inuse absolute (no duration), alloc a delta (a duration)
check "parca durations" "0 1" "$(meta "$TMP/H-parca" "' '.join(str(int(p['duration_nanos'] > 0)) for p in r['profiles'])")"
# sample_types (go tool pprof -raw prints them after "Samples:")
types() { go tool pprof -raw "$1" 2>/dev/null | awk '/^Samples:/ { getline; print; exit }'; }
check "parca's first profile holds inuse_* only" "inuse_objects/count inuse_space/bytes" "$(types "$TMP/H-parca/req-1-0.pb.gz")"
check "parca's second profile holds alloc_* only" "alloc_objects/count alloc_space/bytes" "$(types "$TMP/H-parca/req-1-1.pb.gz")"

# ---- auth and tenant ----
standin ingest "$TMP/auth" --token s3cret --tenant team-a
"$HEAPTAP" push --url "http://127.0.0.1:$sport/ingest" --token s3cret --tenant team-a "$J" >/dev/null 2>"$TMP/auth.err" &&
	[ -f "$TMP/auth/req-1.json" ] && echo "ok[bearer token and X-Scope-OrgID accepted]" || bad "auth: $(cat "$TMP/auth.err")"
"$HEAPTAP" push --url "http://127.0.0.1:$sport/ingest" --token wrong --tenant team-a "$J" >/dev/null 2>"$TMP/auth.err"
rc=$?
[ $rc -eq 1 ] && grep -q "^heaptap: push: $J: http://127.0.0.1:$sport/ingest refused it: HTTP status 401: bad bearer token" "$TMP/auth.err" &&
	echo "ok[a refusal: exit 1, the status and the server's reason]" || bad "refusal: exit $rc: $(cat "$TMP/auth.err")"
stop_standin
standin connect "$TMP/basic" --basic user:pa55
"$HEAPTAP" push --url "http://127.0.0.1:$sport/push.v1.PusherService/Push" --basic user:pa55 "$J" >/dev/null 2>"$TMP/basic.err" &&
	echo "ok[basic auth accepted]" || bad "basic auth: $(cat "$TMP/basic.err")"
stop_standin

# ---- bad inputs ----
# expect NAME STATUS PATTERN CMD...: CMD exits STATUS with PATTERN (grep -E) on stderr
expect() {
	local name=$1 want=$2 pat=$3
	shift 3
	"$@" >/dev/null 2>"$TMP/e.err"
	local rc=$?
	[ $rc -eq "$want" ] && grep -qE "$pat" "$TMP/e.err" && echo "ok[$name: exit $rc]" ||
		bad "$name: exit $rc (want $want): $(cat "$TMP/e.err")"
}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
expect "unreachable URL" 1 "^heaptap: push: $J: http://127.0.0.1:$port/ingest: cannot connect to 127.0.0.1 port $port: Connection refused" \
	"$HEAPTAP" push --url "http://127.0.0.1:$port/ingest" "$J"
printf 'heap_v2/524288\n  t*: 1: 2 [0: 0]\n@ 0xzz\n' >"$TMP/corrupt.heap"
expect "corrupt profile" 1 "^heaptap: .*corrupt.heap" "$HEAPTAP" push --url "http://127.0.0.1:$port/ingest" "$TMP/corrupt.heap"
expect "missing profile" 1 "^heaptap: $TMP/none.heap: No such file" "$HEAPTAP" push --url "http://127.0.0.1:$port/ingest" "$TMP/none.heap"
expect "bad dialect" 2 "^heaptap: push: unknown --format 'grpc' \(ingest, ingest-multipart, connect, parca\)" \
	"$HEAPTAP" push --url "http://127.0.0.1:$port/ingest" --format grpc "$J"
expect "a path naming no backend" 2 "^heaptap: push: cannot tell the backend from the URL's path '/upload'" \
	"$HEAPTAP" push --url "http://127.0.0.1:$port/upload" "$J"
expect "https" 2 "https is not supported: push over http to a local agent" \
	"$HEAPTAP" push --url "https://profiles.example.com/ingest" "$J"
expect "no --url" 2 "^heaptap: push: --url is required" "$HEAPTAP" push "$J"
expect "bad label" 2 "^heaptap: push: bad --label '1x=y'" "$HEAPTAP" push --url "http://127.0.0.1:$port/ingest" --label 1x=y "$J"
# one bad file among good ones: the good one is pushed, the status says something failed
standin ingest "$TMP/mixed"
"$HEAPTAP" push --url "http://127.0.0.1:$sport/ingest" "$TMP/corrupt.heap" "$J" >/dev/null 2>&1
rc=$?
stop_standin
[ $rc -eq 1 ] && [ -f "$TMP/mixed/req-1.json" ] && echo "ok[a corrupt file among good ones: the rest pushed, exit 1]" ||
	bad "mixed: exit $rc, $(ls "$TMP/mixed")"
exit $fail
