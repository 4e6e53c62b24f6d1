#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""push_standin.py - a loopback stand-in for one continuous-profiling backend, for the push
tests. It enforces what the real server checks (and rejects what it rejects), saves every
accepted profile and what came with it, and answers like the backend.

usage: push_standin.py MODE OUTDIR [--token T] [--basic USER:PASS] [--tenant ID] [--fail N]
  MODE: ingest (Pyroscope /ingest), connect (Pyroscope /push.v1.PusherService/Push),
        parca (Parca /profiles/writeraw)
  Writes its port to OUTDIR/port; each accepted request N gives OUTDIR/req-N.json (labels,
  dialect, the profiles' time_nanos and duration_nanos) and OUTDIR/req-N-K.pb.gz.
  --fail N answers 503 to the first N requests (retry tests); refusals are logged in
  OUTDIR/refused.log with the reason.
A test helper, not a test; asserts nothing itself.
"""
import base64, gzip, http.server, json, os, re, sys, urllib.parse

mode, outdir = sys.argv[1], sys.argv[2]
opts = {"token": None, "basic": None, "tenant": None, "fail": 0}
args = sys.argv[3:]
while args:
    k = args.pop(0).lstrip("-")
    opts[k] = args.pop(0)
opts["fail"] = int(opts["fail"])
state = {"n": 0, "seen": 0}
LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


class Reject(Exception):
    def __init__(self, status, why):
        self.status, self.why = status, why


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7F) << s; s += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field, wiretype, value) of one protobuf message; value bytes for length-delimited."""
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v = b[i:i + n]; i += n
            if len(v) != n:
                raise Reject(400, "truncated message")
        elif wt == 1:
            v = b[i:i + 8]; i += 8
        elif wt == 5:
            v = b[i:i + 4]; i += 4
        else:
            raise Reject(400, "bad wire type %d" % wt)
        out.append((f, wt, v))
    return out


def check_pprof(raw, parca=False):
    """Parses a (gzipped) pprof profile as the servers do; returns its facts."""
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except Exception as e:
            raise Reject(400, "bad gzip: %s" % e)
    try:
        fs = fields(raw)
    except Reject:
        raise
    except Exception as e:
        raise Reject(400, "failed to parse profile: %s" % e)
    strings = [v.decode() for f, wt, v in fs if f == 6]
    if not fs or not any(f == 1 for f, _, _ in fs):
        raise Reject(400, "not a profile: no sample types")
    facts = {"time_nanos": 0, "duration_nanos": 0}
    for f, wt, v in fs:
        if f == 9 and wt == 0:
            facts["time_nanos"] = v
        if f == 10 and wt == 0:
            facts["duration_nanos"] = v
    if parca:
        # pkg/normalizer/validate.go: string table starting empty, ids sequential from 1
        if strings and strings[0] != "":
            raise Reject(400, "first item in string table is expected to be empty string")
        for kind, field in (("mapping", 3), ("location", 4), ("function", 5)):
            ids = [dict((ff, vv) for ff, _, vv in fields(v)).get(1, 0) for f, wt, v in fs if f == field]
            if ids != list(range(1, len(ids) + 1)):
                raise Reject(400, "%s id is not sequential" % kind)
    return facts


def save(labels, profiles):
    state["n"] += 1
    n = state["n"]
    meta = {"mode": mode, "labels": labels, "profiles": []}
    for k, (raw, facts) in enumerate(profiles):
        p = os.path.join(outdir, "req-%d-%d.pb.gz" % (n, k))
        with open(p, "wb") as f:
            f.write(raw if raw[:2] == b"\x1f\x8b" else gzip.compress(raw))
        meta["profiles"].append(dict(facts, file=p))
    tmp = os.path.join(outdir, ".req-%d.json" % n)
    with open(tmp, "w") as f:
        json.dump(meta, f)
    os.rename(tmp, os.path.join(outdir, "req-%d.json" % n))


def parse_ingest_name(name):
    m = re.match(r"^([^{}]+)\{(.*)\}$", name)
    if not m:
        raise Reject(400, "name must be app{labels}")
    labels = {"service_name": m.group(1)}
    for kv in filter(None, m.group(2).split(",")):
        k, _, v = kv.partition("=")
        if not LABEL.match(k):
            raise Reject(400, "invalid label name %r" % k)
        labels[k] = v
    return labels


def ingest(h, body):
    u = urllib.parse.urlparse(h.path)
    if u.path != "/ingest":
        raise Reject(404, "not found")
    q = urllib.parse.parse_qs(u.query, keep_blank_values=True)
    for k in ("name", "from", "until", "spyName"):
        if k not in q:
            raise Reject(400, "missing %s" % k)
    labels = parse_ingest_name(q["name"][0])
    if not (q["from"][0].isdigit() and q["until"][0].isdigit() and int(q["from"][0]) <= int(q["until"][0])):
        raise Reject(400, "bad from/until")
    ctype = h.headers.get("Content-Type", "")
    # the server tests format before the content type
    if q.get("format", [""])[0] == "pprof":
        return labels, [(body, check_pprof(body))]
    if not ctype.startswith("multipart/form-data"):
        raise Reject(400, "unknown format: no format=pprof and not multipart/form-data")
    m = re.search(r"boundary=([^;]+)", ctype)
    if not m:
        raise Reject(400, "multipart without boundary")
    parts = {}
    for part in body.split(b"--" + m.group(1).encode())[1:]:
        if part.startswith(b"--"):
            break
        head, _, data = part.partition(b"\r\n\r\n")
        nm = re.search(rb'name="([^"]+)"', head)
        if nm:
            parts[nm.group(1).decode()] = data[:-2] if data.endswith(b"\r\n") else data
    if "prev_profile" in parts:
        raise Reject(400, "prev_profile is not supported")
    if "profile" not in parts:
        raise Reject(400, "multipart without a profile field")
    return labels, [(parts["profile"], check_pprof(parts["profile"]))]


def connect(h, body):
    if h.path != "/push.v1.PusherService/Push":
        raise Reject(404, "not found")
    if h.headers.get("Content-Type", "") != "application/proto":
        raise Reject(415, "content type must be application/proto")
    profiles, labels = [], None
    for f, wt, series in fields(body):
        if f != 1:
            continue
        labels = {}
        for ff, _, v in fields(series):
            if ff == 1:
                d = dict((a, b) for a, _, b in fields(v))
                n, val = d.get(1, b"").decode(), d.get(2, b"").decode()
                if not LABEL.match(n):
                    raise Reject(400, "invalid label name %r" % n)
                if n in labels:
                    raise Reject(400, "duplicate label %r" % n)
                labels[n] = val
            elif ff == 2:
                raw = dict((a, b) for a, _, b in fields(v)).get(1, b"")
                profiles.append((raw, check_pprof(raw)))
        if labels.get("__name__") != "memory" and "__name__" not in labels:
            raise Reject(400, "missing __name__")
        if not labels.get("service_name"):
            raise Reject(400, "service_name label is required")
    if not profiles:
        raise Reject(400, "no samples")
    return labels, profiles


def parca(h, body):
    if h.path != "/profiles/writeraw":
        raise Reject(404, "not found")
    try:
        req = json.loads(body)
    except Exception:
        raise Reject(400, "bad JSON")
    profiles, labels = [], None
    for s in req.get("series", []):
        labels = {}
        for l in s.get("labels", {}).get("labels", []):
            n = l["name"]
            if n != "__name__" and not LABEL.match(n):
                raise Reject(400, "invalid label name: %s" % n)
            if n in labels:
                raise Reject(400, "duplicate label name: %s" % n)
            labels[n] = l["value"]
        if not labels.get("__name__"):
            raise Reject(400, "missing __name__ label")
        for smp in s.get("samples", []):
            raw = base64.b64decode(smp["rawProfile"], validate=True)
            profiles.append((raw, check_pprof(raw, parca=True)))
    if not profiles:
        raise Reject(400, "no samples")
    return labels, profiles


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, status, text):
        b = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if status == 200 else "text/plain")
        self.send_header("Content-Length", str(len(b)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        state["seen"] += 1
        try:
            if state["seen"] <= opts["fail"]:
                raise Reject(503, "unavailable (stand-in told to fail)")
            if opts["token"] and self.headers.get("Authorization") != "Bearer " + opts["token"]:
                raise Reject(401, "bad bearer token")
            if opts["basic"] and self.headers.get("Authorization") != "Basic " + base64.b64encode(opts["basic"].encode()).decode():
                raise Reject(401, "bad basic auth")
            if opts["tenant"] and self.headers.get("X-Scope-OrgID") != opts["tenant"]:
                raise Reject(401, "no org id")
            labels, profiles = {"ingest": ingest, "connect": connect, "parca": parca}[mode](self, body)
            save(labels, profiles)
            self.reply(200, "{}")
        except Reject as r:
            with open(os.path.join(outdir, "refused.log"), "a") as f:
                f.write("%d %s\n" % (r.status, r.why))
            self.reply(r.status, r.why)


srv = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(os.path.join(outdir, ".port"), "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(os.path.join(outdir, ".port"), os.path.join(outdir, "port"))
srv.serve_forever()
