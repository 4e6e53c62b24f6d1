#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/analyze.sh - dump-to-report time of heaptap against jeprof and go tool pprof, and
# heaptap's symbolizer against llvm-symbolizer, on one big C++ program (bench/gen_bigprog.py:
# thousands of generated functions over many translation units, tens of MB of DWARF) and a
# profile of it with >= 20,000 distinct stacks taken by heaptap's collector at
# lg_prof_sample:0. Every tool runs in the same session on the same files, each run a cold
# process (no tool keeps a cache between runs; the page cache is warm); heaptap's runs are
# repeated REPS times and the median taken. Prints wall seconds, CPU seconds (user + sys,
# children included: the fair measure on a busy machine), peak RSS (GNU time %M) and ratios,
# and writes them to bench/out/analyze/results.txt. It is a benchmark, not a test.
# Usage: bench/analyze.sh [REPS]     (run by `make bench` through bench/run.sh)
#        UNITS=20 FUNCS=200 SEEDS=30000 DEPTH=7 to change the program and the profile;
#        LIMIT=300: seconds after which a peer tool is stopped (reported as ">300").
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
REPS=${1:-${REPS:-3}}
UNITS=${UNITS:-20} FUNCS=${FUNCS:-200} SEEDS=${SEEDS:-30000} DEPTH=${DEPTH:-7}
OUT=$ROOT/bench/out/analyze
SRC=$OUT/src-$UNITS-$FUNCS
BIN=$OUT/bigprog-$UNITS-$FUNCS
HT=$ROOT/build/heaptap
LIB=$ROOT/build/libheaptap.so
export PATH="/usr/lib/go/bin:$PATH"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
die() { echo "analyze.sh: $*" >&2; exit 1; }
[ -x "$HT" ] && [ -f "$LIB" ] || die "build heaptap first (make)"
[ -x /usr/bin/time ] || die "GNU time (/usr/bin/time) is missing (apt-get install time)"
mkdir -p "$OUT"

# ---- 1. the program (generated and compiled once, then cached in bench/out/) ----
gen_sum=$(sha1sum bench/gen_bigprog.py | cut -c1-12)
if [ ! -x "$BIN" ] || [ "$(cat "$BIN.gen" 2>/dev/null)" != "$gen_sum" ]; then
	echo "analyze.sh: generating and compiling $UNITS units x $FUNCS functions (once; cached in $OUT)"
	rm -rf "$SRC" && python3 bench/gen_bigprog.py "$SRC" --units "$UNITS" --funcs "$FUNCS" || die "generator failed"
	CXXFLAGS="-std=c++17 -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls"
	# Two compilers at a time at most (shared machine).
	ls "$SRC"/*.cc | xargs -P 2 -I{} sh -c 'g++ '"$CXXFLAGS"' -c "{}" -o "{}.o" || exit 255' || die "compile failed"
	g++ -o "$BIN" "$SRC"/*.o || die "link failed"
	rm -f "$SRC"/*.o
	echo "$gen_sum" >"$BIN.gen"
fi
dwarf_mb=$(size -A "$BIN" | awk '/^\.debug/ {s += $2} END {printf "%.1f", s / 1048576}')
nfuncs=$(nm "$BIN" | grep -c ' [Tt] ')

# ---- 2. the profile: every allocation recorded by heaptap's collector ----
PROF=$OUT/bigprog-$UNITS-$FUNCS-$SEEDS.heap
if [ ! -s "$PROF" ] || [ "$PROF" -ot "$BIN" ]; then
	rm -rf "$T/dumps" && mkdir -p "$T/dumps"
	HEAPTAP_CONF="lg_prof_sample:0,prof_prefix:$T/dumps/big" LD_PRELOAD=$LIB "$BIN" "$SEEDS" "$DEPTH" >/dev/null ||
		die "the program failed under the collector"
	f=$(ls "$T"/dumps/big.*.f*.heap 2>/dev/null | head -n 1)
	[ -n "$f" ] || die "the collector wrote no final dump"
	cp "$f" "$PROF"
fi
nstacks=$(grep -c '^@' "$PROF")
[ "$nstacks" -ge 20000 ] || echo "analyze.sh: warning: only $nstacks stacks (want >= 20000; raise SEEDS)"

# The unique lookup addresses of the program's own frames, as link-time addresses (what
# llvm-symbolizer and heaptap addr2line take): return address - 1 except for frame 0, and
# minus the load bias of the executable mapping (PIE: p_vaddr == p_offset).
python3 - "$PROF" "$BIN" >"$T/addrs" <<'PY' || die "cannot extract addresses"
import os, sys
prof, binpath = sys.argv[1], os.path.realpath(sys.argv[2])
stacks, maps, in_maps = [], [], False
for line in open(prof):
    if line.startswith("MAPPED_LIBRARIES:"):
        in_maps = True
        continue
    if in_maps:
        f = line.split()
        if len(f) >= 6 and "x" in f[1] and os.path.realpath(f[5]) == binpath:
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            maps.append((lo, hi, int(f[2], 16)))
    elif line.startswith("@"):
        stacks.append([int(x, 16) for x in line.split()[1:]])
out = set()
for st in stacks:
    for i, a in enumerate(st):
        a = a - 1 if i else a
        for lo, hi, off in maps:
            if lo <= a < hi:
                out.add(a - lo + off)
for a in sorted(out):
    print("0x%x" % a)
PY
naddrs=$(wc -l <"$T/addrs")

# ---- 3. timings ----
# run NAME REPS LIMIT cmd...: medians of wall seconds, CPU seconds (user + sys, children
# included) and peak RSS (MB) of REPS runs into $T/NAME.res; a run over LIMIT seconds is killed
# and reported as ">LIMIT".
run() {
	local name=$1 reps=$2 limit=$3; shift 3
	local i
	for i in $(seq 1 "$reps"); do
		/usr/bin/time -f '%e %U %S %M' -o "$T/$name.time.$i" timeout -s KILL "$limit" "$@" >"$T/$name.out" 2>"$T/$name.err"
		case $? in
		0) ;;
		124 | 137)
			echo ">$limit >$limit -" >"$T/$name.res"
			echo "analyze.sh: $name: killed after $limit s"
			return ;;
		*) echo "analyze.sh: $name failed:"; tail -n 5 "$T/$name.err" ;;
		esac
	done
	for i in $(seq 1 "$reps"); do tail -n 1 "$T/$name.time.$i"; done | awk -v n="$reps" '
		{ w[NR] = $1; c[NR] = $2 + $3; m[NR] = $4 }
		function med(a,   k, j, t) { for (k = 1; k <= n; k++) for (j = k + 1; j <= n; j++) if (a[j] < a[k]) { t = a[k]; a[k] = a[j]; a[j] = t } return a[int((n + 1) / 2)] }
		END { printf "%.2f %.2f %.0f\n", med(w), med(c), med(m) / 1024 }' >"$T/$name.res"
}
field() { cut -d' ' -f"$2" "$T/$1.res"; }

LIMIT=${LIMIT:-300}
echo "analyze.sh: $BIN: $nfuncs functions, ${dwarf_mb} MB of DWARF; profile: $nstacks stacks, $naddrs unique program addresses"
run heaptap_top "$REPS" "$LIMIT" "$HT" top "$BIN" "$PROF"
HEAPTAP_TIMING=1 "$HT" top "$BIN" "$PROF" 2>"$T/timing" >/dev/null
run heaptap_collapsed "$REPS" "$LIMIT" "$HT" collapsed "$BIN" "$PROF"
have_jeprof=0; command -v jeprof >/dev/null && have_jeprof=1
if [ $have_jeprof = 1 ]; then
	run jeprof_text 1 "$LIMIT" jeprof --text "$BIN" "$PROF"
	run jeprof_collapsed 1 "$LIMIT" jeprof --collapsed "$BIN" "$PROF"
fi
run heaptap_pprof "$REPS" "$LIMIT" "$HT" pprof "$BIN" "$PROF" -o "$T/sym.pb.gz"
"$HT" pprof --no-symbolize "$BIN" "$PROF" -o "$T/raw.pb.gz" 2>/dev/null || echo "analyze.sh: heaptap pprof --no-symbolize failed"
GOPPROF=
command -v go >/dev/null && GOPPROF=$(go env GOTOOLDIR 2>/dev/null)/pprof
[ -n "$GOPPROF" ] && [ -x "$GOPPROF" ] || GOPPROF=
if [ -n "$GOPPROF" ]; then
	run gopprof_sym 1 "$LIMIT" "$GOPPROF" -top "$T/sym.pb.gz"
	# Unsymbolized: pprof finds the binary by the mapping's path and symbolizes it itself.
	run gopprof_raw 1 "$LIMIT" "$GOPPROF" -top "$T/raw.pb.gz"
fi
run heaptap_a2l "$REPS" "$LIMIT" sh -c "'$HT' addr2line -f -i -C -e '$BIN' <'$T/addrs'"
HEAPTAP_TIMING=1 "$HT" addr2line -f -i -C -e "$BIN" <"$T/addrs" 2>"$T/timing_a2l" >/dev/null
have_llvm=0; command -v llvm-symbolizer >/dev/null && have_llvm=1
[ $have_llvm = 1 ] && run llvm_sym "$REPS" "$LIMIT" sh -c "llvm-symbolizer --obj='$BIN' --inlining --demangle <'$T/addrs'"
run binutils_a2l 1 "$LIMIT" sh -c "addr2line -f -i -C -e '$BIN' <'$T/addrs'"

# ---- 4. report ----
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^>/) { printf ">%.0fx", substr(a, 2) / b; exit } if (a == "-" || b + 0 == 0) print "-"; else printf "%.1fx", a / b }'; }
row() { # label, name, reference name
	printf '%-42s %8s %8s %8s %10s %10s\n' "$1" "$(field "$2" 1)" "$(field "$2" 2)" "$(field "$2" 3)" \
		"$(ratio "$(field "$2" 2)" "$(field "$3" 2)")" "$(ratio "$(field "$2" 1)" "$(field "$3" 1)")"
}
{
	echo "== analyzer benchmark ($(date -u +%Y-%m-%d), $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg))"
	echo "program: $nfuncs functions in $UNITS units, ${dwarf_mb} MB DWARF; profile: $nstacks stacks, $naddrs unique program addresses"
	echo "medians of $REPS runs for heaptap, 1 run for the others; cpu = user + sys incl. children; ratios = other / heaptap"
	printf '%-42s %8s %8s %8s %10s %10s\n' "dump -> report" "wall s" "cpu s" "peak MB" "cpu ratio" "wall ratio"
	row "heaptap top" heaptap_top heaptap_top
	[ $have_jeprof = 1 ] && row "jeprof --text" jeprof_text heaptap_top
	row "heaptap collapsed" heaptap_collapsed heaptap_collapsed
	[ $have_jeprof = 1 ] && row "jeprof --collapsed" jeprof_collapsed heaptap_collapsed
	row "heaptap pprof (convert + symbolize)" heaptap_pprof heaptap_pprof
	if [ -n "$GOPPROF" ]; then
		row "go tool pprof -top (heaptap-symbolized)" gopprof_sym heaptap_pprof
		row "go tool pprof -top (unsymbolized)" gopprof_raw heaptap_pprof
	fi
	printf '%-42s %8s %8s %8s %10s %10s\n' "symbolize the $naddrs addresses" "wall s" "cpu s" "peak MB" "cpu ratio" "wall ratio"
	row "heaptap addr2line -f -i -C" heaptap_a2l heaptap_a2l
	[ $have_llvm = 1 ] && row "llvm-symbolizer --inlining" llvm_sym heaptap_a2l
	row "binutils addr2line -f -i -C" binutils_a2l heaptap_a2l
	echo "heaptap top, symbolizer phases:"
	sed 's/^heaptap: timing: symbolize: /  /' "$T/timing"
	echo "heaptap addr2line, symbolizer phases:"
	sed 's/^heaptap: timing: symbolize: /  /' "$T/timing_a2l"
} | tee "$OUT/results.txt"
