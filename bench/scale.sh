#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/scale.sh - the collector at scale (issue 13), against heaptrack in the same run:
# (1) memory per live object with every allocation recorded: tests/progs/scale_sites keeps
#     1 M and 5 M objects (two threads, 1/8/24-byte and 1 MiB objects); peak RSS of the
#     program bare, under heaptap at lg_prof_sample:0, and under heaptrack (the program, and
#     heaptrack's helper process heaptrack_interpret, polled every 20 ms), as bytes per object
#     over the bare run;
# (2) the longest allocation stall while the tables grow: bench/growth_stall times each of 4 M
#     mallocs kept live in thread CPU time (a preemption is not a stall) (median, 99.99th percentile, max), bare and under heaptap at
#     lg_prof_sample:0 and at the default rate; medians of REPS interleaved runs.
# A benchmark, not a test: it prints numbers and fails only when a run fails.
# Usage: bench/scale.sh [REPS]      (run by `make bench` through bench/run.sh)
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
REPS=${1:-${REPS:-3}}
B=$ROOT/build/bench
LIB=$ROOT/build/libheaptap.so
PROG=$ROOT/build/progs/scale_sites
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$B"
cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o "$B/growth_stall" bench/growth_stall.c || exit 1
[ -x "$PROG" ] || make -s progs >/dev/null || exit 1
[ -f "$LIB" ] || { echo "scale.sh: $LIB is not built"; exit 1; }

# peak RSS (KiB) per process name of a command's tree, polled: prints "name kib" lines
cat >"$T/peak.py" <<'PY'
import os, subprocess, sys, time
env = dict(os.environ)
p = subprocess.Popen(sys.argv[1:], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
peak = {}
def tree(root):
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                st = open("/proc/%s/stat" % d).read()
                ppid = int(st.rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(d))
            except Exception:
                pass
    out, todo = [], [root]
    while todo:
        x = todo.pop()
        out.append(x)
        todo += kids.get(x, [])
    return out
while p.poll() is None:
    for pid in tree(p.pid):
        try:
            name, hwm = None, 0
            for line in open("/proc/%d/status" % pid):
                if line.startswith("Name:"):
                    name = line.split()[1]
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
            if name:
                peak[name] = max(peak.get(name, 0), hwm)
        except Exception:
            pass
    time.sleep(0.02)
if p.returncode:
    sys.exit("command failed: %d" % p.returncode)
for k, v in sorted(peak.items()):
    print(k, v)
PY
median() { sort -n | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]; else print 0}'; }

echo "== memory per live object, every allocation recorded (peak RSS over the bare run; median of $REPS)"
printf "%-9s %12s %14s %16s %18s\n" objects bare_MiB heaptap_B/obj heaptrack_B/obj heaptrack+helper
for scale in 0.2 1.0; do
	objs=$(python3 -c "print(int(5000000*$scale)+48)")
	for r in $(seq "$REPS"); do
		python3 "$T/peak.py" "$PROG" live "$T/t" "$scale" | awk '$1=="scale_sites"{print $2}' >>"$T/bare.$scale"
		HEAPTAP_CONF=lg_prof_sample:0,prof_final:false LD_PRELOAD=$LIB \
			python3 "$T/peak.py" "$PROG" live "$T/t" "$scale" | awk '$1=="scale_sites"{print $2}' >>"$T/ht.$scale"
		if command -v heaptrack >/dev/null; then
			(cd "$T" && python3 "$T/peak.py" heaptrack -o "$T/hk" "$PROG" live "$T/t" "$scale") >"$T/hk.out" || true
			awk '$1=="scale_sites"{print $2}' "$T/hk.out" >>"$T/hk.$scale"
			awk '$1=="heaptrack_inter"||$1=="heaptrack_interpret"{print $2}' "$T/hk.out" >>"$T/hkh.$scale"
			rm -f "$T"/hk*.zst "$T"/hk*.gz
		fi
	done
	bare=$(median <"$T/bare.$scale"); ht=$(median <"$T/ht.$scale")
	hk=$(median <"$T/hk.$scale" 2>/dev/null); hkh=$(median <"$T/hkh.$scale" 2>/dev/null)
	python3 -c "
import sys
objs, bare, ht, hk, hkh = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4] or 0), int(sys.argv[5] or 0)
per = lambda k: (k - bare) * 1024.0 / objs
print('%-9d %12.1f %14.1f %16s %18s' % (objs, bare / 1024.0, per(ht),
      '%.1f' % per(hk) if hk else 'n/a', '%.1f' % (per(hk) + hkh * 1024.0 / objs) if hk else 'n/a'))
" "$objs" "$bare" "$ht" "$hk" "$hkh"
done

echo
echo "== allocation latency while the tables grow: 4 M x malloc(16) kept live (thread CPU ns; median of $REPS runs)"
printf "%-34s %10s %10s %10s\n" run median p99.99 max
for r in $(seq "$REPS"); do
	"$B/growth_stall" 4000000 >>"$T/gs.bare"
	HEAPTAP_CONF=lg_prof_sample:0,prof_final:false LD_PRELOAD=$LIB "$B/growth_stall" 4000000 >>"$T/gs.all"
	HEAPTAP_CONF=prof_final:false LD_PRELOAD=$LIB "$B/growth_stall" 4000000 >>"$T/gs.def"
done
for k in bare:unprofiled all:"heaptap lg_prof_sample:0" def:"heaptap default rate"; do
	f=$T/gs.${k%%:*}
	printf "%-34s %10s %10s %10s\n" "${k#*:}" "$(awk '{print $2}' "$f" | median)" \
		"$(awk '{print $4}' "$f" | median)" "$(awk '{print $6}' "$f" | median)"
done
