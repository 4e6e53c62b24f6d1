#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cpu_stats.sh - the CPU profiler's counters in the statistics JSON ("cpu" object): with
# cpu_prof on at 200 Hz, tests/progs/cpu_stats.c spins two threads; the sampled weight
# (ticks) must be its own CPU time * 200 within a wide bound (0.5..1.5), samples > 0 and
# <= ticks, timer "thread", 2..8 threads armed in all (heaptap's own threads are armed too), nothing lost to a full ring; a
# heaptap_cpu_write to a path in a directory that does not exist fails (-2) and counts as one
# profile_write_errors, with profiles_written 0. Without cpu_prof the object says timer "none"
# and samples 0.
set -u
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
prog="$HEAPTAP_BUILD/progs/cpu_stats"
[ -x "$prog" ] || { echo "missing $prog (make progs)"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

(cd "$d" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=prof:false,cpu_prof:true,cpu_hz:200,cpu_prefix:$d/run \
	"$prog" stats 80000000 "$d/no/such/dir/x.pb") >"$d/on.out" 2>"$d/on.err"
rc=$?
[ $rc = 0 ] || { cat "$d/on.out" "$d/on.err"; echo "FAIL: cpu_stats exited with $rc"; exit 1; }
(cd "$d" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=prof:false \
	"$prog" stats 1000000 "$d/no/such/dir/x.pb") >"$d/off.out" 2>"$d/off.err"
rc=$?
[ $rc = 0 ] || { cat "$d/off.out" "$d/off.err"; echo "FAIL: cpu_stats (off) exited with $rc"; exit 1; }

python3 - "$d/on.out" "$d/off.out" <<'PY'
import json, sys
def load(path):
    lines = open(path).read().splitlines()
    kv = dict(l.split(" ", 1) for l in lines if not l.startswith("{"))
    js = json.loads([l for l in lines if l.startswith("{")][0])
    return kv, js["cpu"]
kv, c = load(sys.argv[1])
print("on:", kv, c)
secs = float(kv["cpu_seconds"])
want = secs * 200
bad = []
if kv["bad_write"] != "-2": bad.append("bad_write %s, expected -2" % kv["bad_write"])
if c["timer"] != "thread": bad.append("timer %s" % c["timer"])
if not c["running"]: bad.append("not running")
if c["hz"] != 200: bad.append("hz %s" % c["hz"])
if not (0 < c["samples"] <= c["ticks"]): bad.append("samples %d ticks %d" % (c["samples"], c["ticks"]))
if not (0.5 * want <= c["ticks"] <= 1.5 * want):
    bad.append("ticks %d, expected %.0f (%.2f s of CPU at 200 Hz) +-50%%" % (c["ticks"], want, secs))
if not (2 <= c["threads_armed_total"] <= 8): bad.append("threads_armed_total %d" % c["threads_armed_total"])
if c["lost_buffer_full"] != 0: bad.append("lost_buffer_full %d" % c["lost_buffer_full"])
if c["profile_write_errors"] != 1: bad.append("profile_write_errors %d" % c["profile_write_errors"])
if c["profiles_written"] != 0: bad.append("profiles_written %d" % c["profiles_written"])
kv, c = load(sys.argv[2])
print("off:", kv, c)
if kv["bad_write"] != "-2": bad.append("off: bad_write %s" % kv["bad_write"])
if c["timer"] != "none" or c["samples"] != 0 or c["running"] or c["profile_write_errors"] != 0:
    bad.append("off: %s" % c)
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
