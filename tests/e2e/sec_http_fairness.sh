#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sec_http_fairness.sh - slow and greedy clients do not starve the others (issue 14, item 9):
# 32 slowloris clients that trickle a never-ending head and reconnect the moment they are
# dropped, while a legitimate client makes 20 requests: each must be answered (at most 8
# tries with a short back-off, within 15 s). Then 16 clients ask for large replies (6 MB each, POST /pprof/symbol)
# and never read them: the replies held for them must stay within the server's cap (32 MiB +
# one reply, not 16 copies), and a legitimate client must still be answered within 15 s.
set -u
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
PROG=${HEAPTAP_BUILD:-$ROOT/build}/progs/http_host
[ -x "$PROG" ] || { echo "missing $PROG (make progs)"; exit 1; }
. "$(dirname "$0")/lib/http.sh"

cat >"$tmp/fair.py" <<'PY'
import os, re, socket, sys, threading, time, urllib.request
port, host_pid = int(sys.argv[1]), int(sys.argv[2])
base = "http://127.0.0.1:%d" % port
fails = []
def expect(name, ok, detail):
    print(("ok   " if ok else "FAIL ") + name + ": " + detail)
    if not ok:
        fails.append(name)
def status_of(data):
    try:
        return int(data.split(b" ", 2)[1])
    except Exception:
        return "closed"
def request(raw, timeout=5):
    """One request on a fresh connection; the whole reply, or what came before a reset."""
    data = b""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        s.sendall(raw)
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
        s.close()
    except OSError:
        pass
    return data
STATS = b"GET /heaptap/stats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

# ---- 1. a reconnecting slowloris ----
stop = threading.Event()
connects = [0]
lock = threading.Lock()
def attacker():
    while not stop.is_set():
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            time.sleep(0.01)
            continue
        with lock:
            connects[0] += 1
        try:
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            s.settimeout(0.2)
            while not stop.is_set():
                try:
                    if s.recv(4096) == b"":
                        break  # dropped: come straight back
                except socket.timeout:
                    s.sendall(b"a")  # one more byte, never the end of the head
        except OSError:
            pass
        s.close()
threads = [threading.Thread(target=attacker, daemon=True) for _ in range(32)]
for t in threads:
    t.start()
t0 = time.time()
while connects[0] < 48 and time.time() - t0 < 10:
    time.sleep(0.05)
expect("the slowloris holds more connections than there are slots", connects[0] >= 32, "%d connects" % connects[0])
served, tries, worst = 0, [], 0.0
for i in range(20):
    t1 = time.time()
    for attempt in range(1, 9):
        st = status_of(request(STATS))
        if st == 200:
            break
        time.sleep(0.05 * attempt)  # a client backs off a little, as curl --retry does
    dt = time.time() - t1
    worst = max(worst, dt)
    if st == 200:
        served += 1
        tries.append(attempt)
c0 = connects[0]
stop.set()
for t in threads:
    t.join(10)
print("slowloris: %d connects in %.1f s; legitimate: %d/20 served, tries %s, slowest %.2f s"
      % (c0, time.time() - t0, served, tries, worst))
expect("a legitimate client is served during a reconnecting slowloris", served == 20, "%d of 20" % served)
expect("each within 8 tries and 15 s", worst < 15 and all(t <= 8 for t in tries), "slowest %.2f s" % worst)
time.sleep(1.5)  # the slowloris' last connections drain

# ---- 2. clients that never read their replies ----
heap = urllib.request.urlopen(base + "/pprof/heap", timeout=10).read().decode()
addr, name = None, b""
for a in re.findall(r"0x[0-9a-f]+", " ".join(l for l in heap.splitlines() if l.startswith("@"))):
    line = urllib.request.urlopen(base + "/pprof/symbol?" + a, timeout=10).read().strip()
    if line:
        addr, name = int(a, 16), line.split(b" ", 1)[1]
        break
expect("an address of the program that resolves", addr is not None, hex(addr or 0))
one = b"0x%016x+" % addr
body = one * (4 * 1024 * 1024 // len(one))
readers, statuses = [], []
for i in range(16):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"POST /pprof/symbol HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    readers.append(s)
for s in readers:
    head = b""
    try:
        while b"\r\n" not in head:  # the status line, and not a byte more is asked for
            b = s.recv(64)
            if not b:
                break
            head += b
    except OSError:
        pass
    statuses.append(status_of(head))
def held():
    total = 0
    for fd in os.listdir("/proc/%d/fd" % host_pid):
        p = "/proc/%d/fd/%s" % (host_pid, fd)
        try:
            if os.readlink(p).startswith("/memfd:heaptap-http"):
                total += os.stat(p).st_size
        except OSError:
            pass
    return total
reply = (len(body) // len(one)) * (len(one) + len(name) + 1)  # "0x<16 digits> <name>\n" each
pinned = held()
print("16 never-reading clients: statuses %s; reply memfds hold %.1f MB (one reply %.1f MB)"
      % (statuses, pinned / 1e6, reply / 1e6))
expect("16 unread replies: answered or refused", all(st in (200, 503) for st in statuses), str(statuses))
expect("unread replies held within 32 MiB + one reply", pinned <= (32 << 20) + reply, "%.1f MB" % (pinned / 1e6))
t1 = time.time()
st = None
while time.time() - t1 < 15:
    st = status_of(request(STATS))
    if st == 200:
        break
    time.sleep(0.25)
expect("a legitimate client is served while they hold their replies", st == 200,
       "%s after %.2f s" % (st, time.time() - t1))
for s in readers:
    s.close()
sys.exit(1 if fails else 0)
PY

port=$(free_port)
host_start "http:127.0.0.1:$port"
python3 "$tmp/fair.py" "$port" "$pid" || fails=$((fails + 1))
host_stop || fail "host exited with $?"
echo "$fails failures"
[ $fails = 0 ]
