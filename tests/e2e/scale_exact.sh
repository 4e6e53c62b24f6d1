#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# scale_exact.sh - every allocation sampled (lg_prof_sample:0, default options otherwise) on a
# program keeping 5 M live objects from two threads (1-, 8-, 24-byte and 1 MiB objects):
# nothing is dropped (no table ceiling), and the real jeprof, go tool pprof and heaptap top
# each show every site within 0.5 % of the truth. Before issue 13 the live table filled at
# 1 M objects and 1-byte objects read +58 % through jeprof (raw counts at heap_v2/1).
set -u
. "$(dirname "$0")/lib/common.sh"
ht_init
[ "$PROFILER" = heaptap ] || ht_skip "heaptap-only behaviour"
command -v jeprof >/dev/null || ht_skip "jeprof is not installed"
command -v go >/dev/null || ht_skip "go is not installed"
ht_need_prog scale_sites
d=$TMP/run
ht_run "$d" lg_prof_sample:0,prof_format:heap_v2+pprof "$BIN" live "$d/truth.txt" 2>"$d.err" ||
	ht_fail "scale_sites exited with $? ($(cat "$d.err"))"
cat "$d.err"
grep -q . "$d.err" && ht_fail "the collector printed something (a table filled?)"
dump=$(ht_final "$d") || exit 1
grep '^# heaptap: \(samples\|dropped_samples\)=' "$dump"
grep -q '^# heaptap: dropped_samples=0$' "$dump" || ht_fail "samples were dropped"
ht_jeprof "$BIN" "$dump" "$d/jeprof" || ht_fail "jeprof failed"
pb=$(ht_pprof_input "$dump") || exit 1
ht_gopprof "$BIN" "$pb" "$d/gopprof" || ht_fail "go tool pprof failed"
"$HEAPTAP_BUILD/heaptap" top --show_bytes --nodecount=50 "$BIN" "$dump" >"$d/top" 2>"$d/top.err" ||
	ht_fail "heaptap top failed: $(cat "$d/top.err")"
python3 - "$d/truth.txt" "$d/jeprof" "$d/gopprof" "$d/top" <<'PY'
import re, sys
truth = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "site":
        truth[f[1]] = int(f[2])
def flat(path, kind):
    got = {}
    for line in open(path):
        f = line.split()
        if len(f) < 6:
            continue
        name = f[-1] if kind != "go" else " ".join(f[5:])
        v = f[0]
        m = re.match(r"^([0-9.]+)([a-zA-Z]*)$", v)
        if not m:
            continue
        x = float(m.group(1))
        x *= {"": 1, "B": 1, "kB": 1024, "KB": 1024, "MB": 1 << 20, "GB": 1 << 30}.get(m.group(2), 1)
        got[name] = got.get(name, 0) + x
    return got
bad = 0
for path, kind in ((sys.argv[2], "jeprof"), (sys.argv[3], "go"), (sys.argv[4], "heaptap")):
    got = flat(path, kind)
    for site, want in truth.items():
        have = got.get(site, 0)
        err = abs(have - want) / want
        ok = err <= 0.005
        print("%-8s %-12s truth %10d  shown %12.0f  %+.3f%%  %s" % (kind, site, want, have,
              100 * (have - want) / want, "ok" if ok else "WRONG"))
        bad += not ok
sys.exit(1 if bad else 0)
PY
