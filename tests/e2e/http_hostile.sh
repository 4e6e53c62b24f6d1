#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# http_hostile.sh - the collector's HTTP server against hostile clients, loopback only:
# oversized heads (431) and bodies (413), 16 stalled 3 MiB bodies at once (RSS bounded, freed
# at the deadline, the oldest evicted for a 17th client), chunked bodies (411), malformed request lines (400/505),
# other methods (405), path traversal and file paths in queries (400), a slow client sending a
# byte a second (dropped when the slots fill up, at the latest at the 10 s deadline), 200
# connections at once (every one answered or closed), a Host header naming another machine (403: DNS rebinding), a program that
# closes the server's descriptors and reuses the numbers, IPv6, then a token-protected server. The host must keep
# serving, its RSS must stay within 64 MiB of where it started, and it must exit normally.
# With every slot busy the oldest slow sender is evicted for a newcomer (sec_http_fairness.sh
# has the reconnecting variant).
set -u
B=${HEAPTAP_BUILD:-$ROOT/build}
PROG=$B/progs/http_host
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
[ -x "$PROG" ] || { echo "missing $PROG (make progs)"; exit 1; }
. "$(dirname "$0")/lib/http.sh"
start_host() { # conf
	rm -f "$tmp/out"
	TMPDIR=$tmp HEAPTAP_CONF="$1,prof_final:false" LD_PRELOAD=$HEAPTAP_LIB "$PROG" "$tmp/stop" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	for _ in $(seq 100); do
		grep -q '^ready' "$tmp/out" 2>/dev/null && python3 -c "import socket; socket.create_connection(('127.0.0.1', $port)).close()" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "host did not start"; cat "$tmp/err"; exit 1
}
stop_host() {
	touch "$tmp/stop"
	wait "$pid"
	local rc=$?
	pid=
	rm -f "$tmp/stop"
	return $rc
}
rss_kib() { awk '/^VmRSS:/{print $2}' /proc/"$pid"/status; }

cat >"$tmp/hostile.py" <<'PY'
import socket, sys, time, threading
port = int(sys.argv[1])
host_pid = sys.argv[2]
fails = []
def rss_kib():
    for line in open("/proc/%s/status" % host_pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1
def conn():
    return socket.create_connection(("127.0.0.1", port), timeout=15)
def status_of(data):
    try:
        return int(data.split(b" ", 2)[1])
    except Exception:
        return "closed"
def req(raw):
    s = conn()
    try:
        s.sendall(raw)
    except OSError:
        pass
    data = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except OSError:
        pass
    s.close()
    return data
def expect(name, got, want):
    ok = got in want if isinstance(want, (list, tuple, set)) else got == want
    print(("ok   " if ok else "FAIL ") + "%s: got %s, want %s" % (name, got, want))
    if not ok:
        fails.append(name)

slow_result = {}
def slow_client():
    # one byte a second: the server must drop it at its 10 s read deadline
    s = conn()
    t0 = time.time()
    dropped = False
    for ch in b"GET / HTTP/1.1\r\nX-Slow: " + b"a" * 60:
        try:
            s.send(bytes([ch]))
            s.settimeout(1.0)
            if s.recv(100) == b"":
                dropped = True
                break
        except socket.timeout:
            pass
        except OSError:
            dropped = True
            break
        if time.time() - t0 > 20:
            break
    slow_result["dropped"] = dropped
    slow_result["after"] = time.time() - t0
    s.close()
slow = threading.Thread(target=slow_client)
slow.start()


expect("head over 8 KiB", status_of(req(b"GET / HTTP/1.1\r\nX: " + b"a" * 9000 + b"\r\n\r\n")), 431)
expect("target over 8 KiB", status_of(req(b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n")), 431)
expect("body over 4 MiB", status_of(req(b"POST /pprof/symbol HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4194305\r\n\r\n" + b"0x1+" * 1000)), 413)
expect("Content-Length past 64 bits", status_of(req(b"POST /pprof/symbol HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n")), 413)
expect("chunked body", status_of(req(b"POST /pprof/symbol HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n0x1+0\r\n0\r\n\r\n")), 411)
body = (b"0x1+" * (4 * 1024 * 1024 // 4))[:4 * 1024 * 1024]
expect("body of exactly 4 MiB", status_of(req(b"POST /pprof/symbol HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % len(body) + body)), 200)
for raw in [b"GARBAGE\r\n\r\n", b"GET /\r\n\r\n", b"GET / HTTP/1.1\r\nNoColon\r\n\r\n",
            b"\x00\x01\x02 / HTTP/1.1\r\n\r\n", b"GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", b"GET  HTTP/1.1\r\n\r\n"]:
    expect("malformed %r" % raw[:24], status_of(req(raw)), 400)
expect("HTTP/2.0", status_of(req(b"GET / HTTP/2.0\r\n\r\n")), 505)
expect("DELETE", status_of(req(b"DELETE / HTTP/1.1\r\n\r\n")), 405)
for path in [b"/../../etc/passwd", b"/%2e%2e/%2e%2e/etc/passwd", b"/pprof/%2E%2E/pprof/heap", b"/pprof/./heap",
             b"/heaptap/dump?file=/etc/passwd", b"/heaptap/dump?f=%2Fetc%2Fshadow",
             b"/memory-profiler/download/raw?id=../../etc/passwd", b"/a%5c..%5cb"]:
    expect("traversal %s" % path.decode(), status_of(req(b"GET " + path + b" HTTP/1.1\r\n\r\n")), 400)
expect("DNS rebinding: Host evil.example", status_of(req(b"GET /pprof/heap HTTP/1.1\r\nHost: evil.example:%d\r\n\r\n" % port)), 403)
expect("Host localhost", status_of(req(b"GET /pprof/symbol HTTP/1.1\r\nHost: localhost:%d\r\n\r\n" % port)), 200)
expect("no file is served by name", b"root:" in req(b"GET /%2e%2e/%2e%2e/%2e%2e/etc/passwd HTTP/1.0\r\n\r\n"), False)

# 200 connections at once (loopback): the first free slots are served, the rest get 503 or a close
socks = []
for i in range(200):
    try:
        socks.append(conn())
    except OSError:
        pass
statuses = {}
lock = threading.Lock()
def one(sk):
    try:
        sk.sendall(b"GET /heaptap/stats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        d = b""
        while True:
            b = sk.recv(65536)
            if not b:
                break
            d += b
        st = status_of(d)
    except OSError:
        st = "closed"
    with lock:
        statuses[st] = statuses.get(st, 0) + 1
    sk.close()
ths = [threading.Thread(target=one, args=(sk,)) for sk in socks]
t0 = time.time()
for t in ths:
    t.start()
for t in ths:
    t.join()
print("200 connections: %s in %.1f s" % (statuses, time.time() - t0))
expect("200 connections answered 200, 503 or closed", set(statuses) <= {200, 503, "closed"}, True)
expect("200 connections: at least one served", statuses.get(200, 0) >= 1, True)
expect("200 connections: all accounted for", sum(statuses.values()), len(socks))

# 16 clients announce 4 MiB bodies, send 3 MiB and stall: every slot holds a body buffer at
# once. Memory must stay within 16 x 4 MiB, and come back when the 10 s deadline drops them.
# A client arriving meanwhile is served: the oldest slow sender gives its slot up.
rss_before = rss_kib()
stalled = []
for i in range(16):
    sk = conn()
    sk.sendall(b"POST /pprof/symbol HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4194304\r\n\r\n" + b"0x1+" * (3 * 1024 * 1024 // 4))
    stalled.append(sk)
t0 = time.time()
rss_stalled = rss_kib()
while rss_stalled - rss_before < 30 * 1024 and time.time() - t0 < 5:
    time.sleep(0.1)  # the server reads the bodies as they arrive
    rss_stalled = rss_kib()
print("RSS %d KiB before, %d KiB with 16 stalled 3 MiB bodies" % (rss_before, rss_stalled))
expect("RSS with 16 stalled bodies within 16 x 4 MiB", rss_stalled - rss_before <= 16 * 4096, True)
expect("stalled bodies are really held (>= 30 MiB)", rss_stalled - rss_before >= 30 * 1024, True)
expect("a 17th client is served while slow senders hold every slot", status_of(req(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")), 200)
def closed_within(sk, secs):
    sk.settimeout(secs)
    try:
        return sk.recv(100) == b""
    except socket.timeout:
        return False
    except OSError:
        return True
# long before the 10 s deadline: the oldest was evicted, the next one still waits
expect("the oldest stalled sender gave its slot up", closed_within(stalled[0], 3), True)
expect("the next stalled sender still holds its slot", closed_within(stalled[1], 0.2), False)

slow.join()
for sk in stalled[1:]:
    expect("stalled body dropped at the deadline", closed_within(sk, 15), True)
    sk.close()
time.sleep(0.2)
rss_after = rss_kib()
print("RSS %d KiB after the stalled bodies were dropped" % rss_after)
expect("body buffers unmapped after the drop", rss_after - rss_before <= 8 * 1024, True)
print("slow client dropped after %.1f s" % slow_result["after"])
# evicted as soon as the slots filled up (200 connections at once), at the latest at its deadline
expect("slow client dropped within 13 s", slow_result["dropped"] and slow_result["after"] <= 13, True)
expect("still serving", status_of(req(b"GET /pprof/symbol HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")), 200)
sys.exit(1 if fails else 0)
PY

port=$(free_port)
start_host "http:127.0.0.1:$port"
rss0=$(rss_kib)
python3 "$tmp/hostile.py" "$port" "$pid" || fails=$((fails + 1))
rss1=$(rss_kib)
echo "host RSS: $rss0 KiB before, $rss1 KiB after"
if [ $((rss1 - rss0)) -gt 65536 ]; then echo "FAIL: RSS grew by $((rss1 - rss0)) KiB"; fails=$((fails + 1)); fi
stop_host || { echo "FAIL: host exited with $?"; cat "$tmp/err"; fails=$((fails + 1)); }

# a program that closes every descriptor it did not open (like a daemon) and reuses the numbers:
# the server must notice, stop, and leave the program's new files alone
port=$(free_port)
HTTP_HOST_CLOSEFDS=$tmp/closefds start_host "http:127.0.0.1:$port"
for i in 1 2 3; do curl -s -o /dev/null "http://127.0.0.1:$port/pprof/heap"; done
# a request in flight across the close: its socket and its slot's memfd numbers get reused
python3 -c '
import socket, sys, time, os
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /pprof/heap HTTP/1.1\r\n")
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
time.sleep(0.3)
try:
    s.sendall(b"\r\n")
    s.recv(100)
except OSError:
    pass
' "$port" "$tmp/closefds.f63" &
inflight=$!
sleep 0.3
cpu0=$(awk '{print $14 + $15}' /proc/$pid/stat)
touch "$tmp/closefds"
for _ in $(seq 100); do grep -q '^hostfiles' "$tmp/out" && break; sleep 0.1; done
cpu1=$(awk '{print $14 + $15}' /proc/$pid/stat)
wait $inflight
ticks=$((cpu1 - cpu0))
if grep -qx 'hostfiles intact' "$tmp/out" && grep -q 'closed the listening socket' "$tmp/err" && [ $ticks -lt 50 ]; then
	echo "ok   descriptors closed under the server: it stopped ($ticks CPU ticks in 2 s), the program's files are intact"
else
	echo "FAIL: closed descriptors: $(grep '^hostfiles' "$tmp/out"), $ticks CPU ticks, stderr: $(cat "$tmp/err")"; fails=$((fails + 1))
fi
stop_host || { echo "FAIL: host exited with $?"; fails=$((fails + 1)); }

# an IPv6 loopback server, when this machine has ::1
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
	port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1",0)); print(s.getsockname()[1])')
	TMPDIR=$tmp HEAPTAP_CONF="http:[::1]:$port,prof_final:false" LD_PRELOAD=$HEAPTAP_LIB "$PROG" "$tmp/stop" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	for _ in $(seq 100); do grep -q '^ready' "$tmp/out" 2>/dev/null && break; sleep 0.1; done
	c6=$(curl -s -g -o "$tmp/b6" -w '%{http_code}' "http://[::1]:$port/pprof/symbol")
	if [ "$c6" = 200 ] && [ "$(cat "$tmp/b6")" = "num_symbols: 1" ]; then echo "ok   IPv6 loopback [::1]:$port"; else echo "FAIL: IPv6 loopback: $c6"; fails=$((fails + 1)); fi
	stop_host || { echo "FAIL: host exited with $?"; fails=$((fails + 1)); }
else
	echo "note: no IPv6 loopback here, its check skipped"
fi

# a token-protected server
port=$(free_port)
start_host "http:127.0.0.1:$port,http_token:s3cr3t"
U=http://127.0.0.1:$port
c1=$(curl -s -o /dev/null -w '%{http_code}' "$U/pprof/symbol")
c2=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer wrong' "$U/pprof/symbol")
c3=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer s3cr3t' "$U/pprof/symbol")
c4=$(curl -s -o /dev/null -w '%{http_code}' "$U/pprof/symbol?token=s3cr3t")
c5=$(curl -s -o /dev/null -w '%{http_code}' "$U/pprof/symbol?token=s3cr3")
if [ "$c1 $c2 $c3 $c4 $c5" = "401 401 200 200 401" ]; then
	echo "ok   token: none 401, wrong 401, bearer 200, query 200, prefix 401"
else
	echo "FAIL: token statuses $c1 $c2 $c3 $c4 $c5, want 401 401 200 200 401"; fails=$((fails + 1))
fi
stop_host || { echo "FAIL: host exited with $?"; fails=$((fails + 1)); }
echo "$fails failures"
[ $fails = 0 ]
