#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/perf_overhead.sh - the collector's overhead on bench/mallocbench, measured two ways:
# (1) callgrind instruction counts (deterministic: noise-free on a shared machine) of one
# thread, plain, under the do-nothing interposer and under heaptap, per operation in the steady
# state (start-up cancels); (2) wall-time medians of N interleaved
# runs with 1 and 2 threads of: glibc, glibc under a do-nothing interposer
# (bench/null_interposer.c: the extra call level any LD_PRELOAD profiler pays, so heaptap's
# own cost is its ratio to this one), glibc + heaptap, jemalloc, jemalloc prof:true (its own
# profiler, default lg_prof_sample:19), heaptap over jemalloc (LD_PRELOAD="heaptap jemalloc":
# the same allocator below both profilers), and optionally a second heaptap build (BASE=path.so)
# for before/after comparisons in the same runs; the CPU time of the same runs (user + sys, GNU
# time) as well. Prints numbers; checks nothing.
#
# Env: N (runs, 9), OPS (ops per thread, 300000), R (rounds per run, best one kept: 5),
# THREADS (the thread counts, "1 2"),
# CG=0 skips callgrind, LIB, BASE, NAMES
# (the configurations to run, e.g. "plain base heaptap"; "nozone" is heaptap with
# prof_zone:false, sampled blocks left in glibc's heap, not run unless named).
set -u
cd "$(dirname "$0")/.."
n=${N:-9}
ops=${OPS:-300000}
rounds=${R:-5}
lib=${LIB:-$PWD/build/libheaptap.so}
base=${BASE:-}
je=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
B=build/bench
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$B"
cc -std=gnu11 -D_GNU_SOURCE -O2 -g -pthread -o "$B/mallocbench" bench/mallocbench.c || exit 1
cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -o "$B/null_interposer.so" \
	bench/null_interposer.c -ldl || exit 1
HT_CONF=prof_final:false

if [ "${CG:-1}" != 0 ] && command -v valgrind >/dev/null; then
	# marginal instructions: the run of 3 x cgops minus the run of cgops, so start-up (the
	# collector's initialisation, the loader) cancels and what is left is the steady state
	cgops=200000
	echo "== callgrind, mallocbench -t 1: instructions per operation in the steady state" \
		"(-n $((3 * cgops)) minus -n $cgops)"
	cg() { valgrind --tool=callgrind --callgrind-out-file="$T/cg.$1.%p" --trace-children=yes "${@:2}" 2>&1 |
		sed -n 's/.*I *refs: *//p' | tr -d , | tail -1; }
	# cgm NAME CMD...: prints the marginal instructions of 2 x cgops operations
	cgm() {
		local a b
		a=$(cg "$1.1" "${@:2}" "$B/mallocbench" -t 1 -n $cgops)
		b=$(cg "$1.3" "${@:2}" "$B/mallocbench" -t 1 -n $((3 * cgops)))
		echo $((b - a))
	}
	p=$(cgm plain env)
	z=$(cgm null env LD_PRELOAD="$B/null_interposer.so")
	h=$(cgm ht env HEAPTAP_CONF=$HT_CONF LD_PRELOAD="$lib")
	cgn=$((2 * cgops))
	echo "plain   $(echo "scale=1; $p / $cgn" | bc) instructions/op"
	echo "null    $(echo "scale=1; $z / $cgn" | bc) instructions/op  x$(echo "scale=4; $z / $p" | bc) of plain"
	echo "heaptap $(echo "scale=1; $h / $cgn" | bc) instructions/op  x$(echo "scale=4; $h / $p" | bc) of plain, x$(echo "scale=4; $h / $z" | bc) of null"
	if [ -n "$base" ]; then
		b=$(cgm base env HEAPTAP_CONF=$HT_CONF LD_PRELOAD="$base")
		echo "base    $(echo "scale=1; $b / $cgn" | bc) instructions/op  x$(echo "scale=4; $b / $p" | bc) of plain"
	fi
	# per-call self cost of the interposers (what the fast paths execute), longer run
	f=$(ls "$T"/cg.ht.3.* | tail -1)
	callgrind_annotate "$f" 2>/dev/null | grep -E '\?\?\?:(malloc|free|realloc|core_[a-z_]*) |record|forget|livetab|sampzone' | head -14
fi

[ "$n" -gt 0 ] || exit 0 # N=0: the instruction counts only

# cmd NAME THREADS: sets the array c to the command of one mallocbench run of configuration NAME
cmd() {
	local mb=("$B/mallocbench" -t "$2" -n "$ops" -r "$rounds")
	case $1 in
	plain) c=("${mb[@]}") ;;
	null) c=(env LD_PRELOAD="$B/null_interposer.so" "${mb[@]}") ;;
	heaptap) c=(env HEAPTAP_CONF="$HT_CONF" LD_PRELOAD="$lib" "${mb[@]}") ;;
	base) c=(env HEAPTAP_CONF="$HT_CONF" LD_PRELOAD="$base" "${mb[@]}") ;;
	nozone) c=(env HEAPTAP_CONF="$HT_CONF,prof_zone:false" LD_PRELOAD="$lib" "${mb[@]}") ;;
	jemalloc) c=(env LD_PRELOAD="$je" "${mb[@]}") ;;
	jeprof) c=(env LD_PRELOAD="$je" MALLOC_CONF=prof:true,prof_final:false "${mb[@]}") ;;
	htje) c=(env HEAPTAP_CONF="$HT_CONF" LD_PRELOAD="$lib $je" "${mb[@]}") ;;
	esac
}
# run NAME THREADS: one run; appends its wall seconds (mallocbench's best round) to
# $T/NAME.THREADS and its CPU seconds (user + sys of the whole process, GNU time; steadier than
# wall time on a shared machine) to $T/NAME.THREADS.cpu
run() {
	local c
	cmd "$1" "$2"
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "%U %S" -o "$T/time" "${c[@]}" >"$T/out"
		awk '{print $1 + $2}' "$T/time" >>"$T/$1.$2.cpu"
	else
		"${c[@]}" >"$T/out"
	fi
	sed -n 's/.*: \([0-9.]*\) s,.*/\1/p' "$T/out" >>"$T/$1.$2"
}
median() { sort -g "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
names="plain null heaptap jemalloc jeprof htje"
[ -n "$base" ] && names="plain null base heaptap jemalloc jeprof htje"
[ -f "$je" ] || names=$(echo "$names" | sed 's/ jemalloc jeprof htje//')
names=${NAMES:-$names}
# rr A B [SUFFIX]: median of per-round ratios A/B for the thread count $t (each run against the
# run of its own round: drift cancels); SUFFIX .cpu: of the CPU times
# (with a distribution-free 95% confidence interval of that median from N >= 9 runs: the
# order statistics n/2 -+ 0.98 sqrt(n), by the normal approximation of the binomial)
rr() {
	paste "$T/$1.$t${3:-}" "$T/$2.$t${3:-}" | awk '$2 > 0 {print $1 / $2}' >"$T/r.$1.$t"
	sort -g "$T/r.$1.$t" | awk '{a[NR] = $1} END {
		m = a[int((NR + 1) / 2)]
		if (NR < 9) { print m; exit }
		lo = int(NR / 2 - 0.98 * sqrt(NR)); hi = int(NR / 2 + 1 + 0.98 * sqrt(NR) + 0.999)
		if (lo < 1) lo = 1; if (hi > NR) hi = NR
		printf "%s [95%% CI %s-%s]\n", m, a[lo], a[hi] }'
}
for t in ${THREADS:-1 2}; do
	echo "== wall, mallocbench -t $t -n $ops, median of $n interleaved runs"
	for i in $(seq "$n"); do
		for k in $names; do run "$k" "$t"; done
	done
	for k in $names; do eval "m_$k=$(median "$T/$k.$t")"; done
	for k in $names; do
		v=$(eval echo "\$m_$k")
		case $k in
		plain) echo "plain     $v s" ;;
		null) echo "null      $v s  x$(echo "scale=3; $v / $m_plain" | bc) vs plain (do-nothing interposer: the floor; per-round x$(rr null plain))" ;;
		heaptap|base|nozone) echo "$k $v s  x$(echo "scale=3; $v / $m_plain" | bc) vs plain (median of per-round ratios x$(rr "$k" plain)$(
			case " $names " in *" null "*) echo "; over the floor x$(rr "$k" null)" ;; esac))" ;;
		jemalloc) echo "jemalloc  $v s" ;;
		jeprof) echo "jeprof    $v s  x$(echo "scale=3; $v / $m_jemalloc" | bc) vs jemalloc (jemalloc's profiler; per-round x$(rr jeprof jemalloc))" ;;
		htje) echo "htje      $v s  x$(echo "scale=3; $v / $m_jemalloc" | bc) vs jemalloc (heaptap over jemalloc; per-round x$(rr htje jemalloc))" ;;
		esac
	done
	[ -s "$T/plain.$t.cpu" ] || continue
	echo "-- CPU time (user + sys of each whole run), the same runs: median of per-round ratios"
	for k in $names; do
		case $k in
		plain | jemalloc) ;;
		jeprof | htje) [ -s "$T/jemalloc.$t.cpu" ] && echo "$k x$(rr "$k" jemalloc .cpu) vs jemalloc" ;;
		*) echo "$k x$(rr "$k" plain .cpu) vs plain" ;;
		esac
	done
done
