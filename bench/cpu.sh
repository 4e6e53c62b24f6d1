#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/cpu.sh - the CPU profiler's cost and accuracy against gperftools' CPU profiler
# (libprofiler.so, CPUPROFILE) and, where installed, `perf record`:
#  1. overhead: CPU time (user+sys, GNU time) of a CPU-bound multi-threaded program
#     (tests/progs/cpu_split.c, 10 units over 4+ threads) and of the malloc-heavy benchmark
#     (bench/mallocbench.c, 4 threads) unprofiled, under heaptap at 100 Hz and 1000 Hz
#     (cpu_prof:true, heap profiling off), under gperftools at 100 Hz and 1000 Hz
#     (CPUPROFILE_FREQUENCY), and under perf record -F 100 / 1000; medians of REPS (5)
#     interleaved runs, printed as ratios to the unprofiled run (the goal: <= 1.01 at 100 Hz);
#  2. accuracy: work_a's share of work_a + work_b (truth 0.75) and work_side's share of all
#     work (truth 0.20) in each profiler's profile (go tool pprof -top).
# A benchmark, not a test: it prints numbers. Usage: bench/cpu.sh [REPS]
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
REPS=${1:-${REPS:-5}}
LIB=$ROOT/build/libheaptap.so
GP=/usr/lib/x86_64-linux-gnu/libprofiler.so.0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export PPROF_TMPDIR=$T/pprof
make -s build/progs/cpu_split build/libheaptap.so >/dev/null || exit 1
mkdir -p "$T/b"
cc -std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -pthread -o "$T/b/mallocbench" bench/mallocbench.c || exit 1
SPLIT="$ROOT/build/progs/cpu_split env 200000000"
MB="$T/b/mallocbench 4"

# run NAME CMD...: CPU seconds (user+sys) of one run, appended to $T/NAME.times
run() {
	local name=$1; shift
	/usr/bin/time -f '%U %S' -o "$T/t" "$@" >/dev/null 2>&1
	awk '{ print $1 + $2 }' "$T/t" >>"$T/$name.times"
}
median() { sort -g "$1" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

configs="none heaptap100 heaptap1000"
[ -f "$GP" ] && configs="$configs gperf100 gperf1000"
command -v perf >/dev/null && perf record -q -o /dev/null true 2>/dev/null && configs="$configs perf100 perf1000"
for prog in split mb; do
	cmd=$SPLIT; [ $prog = mb ] && cmd=$MB
	for _ in $(seq "$REPS"); do
		for c in $configs; do
			case $c in
			none) run $prog.$c $cmd ;;
			heaptap*) run $prog.$c env LD_PRELOAD=$LIB HEAPTAP_CONF=prof:false,cpu_prof:true,cpu_hz:${c#heaptap},prof_prefix:$T/h $cmd ;;
			gperf*) run $prog.$c env LD_PRELOAD=$GP CPUPROFILE=$T/g.$c.prof CPUPROFILE_FREQUENCY=${c#gperf} $cmd ;;
			perf*) run $prog.$c perf record -q -F ${c#perf} -g -o "$T/perf.data" -- $cmd ;;
			esac
		done
	done
	base=$(median "$T/$prog.none.times")
	printf '\n%s (CPU s, median of %d)\n' "$prog" "$REPS"
	for c in $configs; do
		m=$(median "$T/$prog.$c.times")
		printf '  %-12s %8.3f s  x%.3f\n' "$c" "$m" "$(echo "$m / $base" | bc -l)"
	done
done

printf '\naccuracy on cpu_split (truth: work_a/(a+b) 0.75, work_side/all 0.20)\n'
share() {
	go tool pprof -top -unit=ms -nodecount=100000 "$ROOT/build/progs/cpu_split" "$1" 2>/dev/null |
		awk '$4 ~ /ms$/ { v = $4; sub(/ms$/, "", v); s[$NF] = v }
		     END { a = s["work_a"]; b = s["work_b"]; all = a + b + s["work_side"] + s["work_late"] + s["work_pool"];
		           if (all > 0) printf "a/(a+b) %.3f  side/all %.3f\n", a / (a + b), s["work_side"] / all }'
}
for hz in 100 1000; do
	(cd "$T" && env LD_PRELOAD=$LIB HEAPTAP_CONF=prof:false,cpu_prof:true,cpu_hz:$hz,prof_prefix:$T/acc$hz $SPLIT >/dev/null 2>&1)
	printf '  heaptap %4s Hz: %s\n' $hz "$(share "$(ls "$T"/acc$hz.*.cpu.pb)")"
	if [ -f "$GP" ]; then
		env LD_PRELOAD=$GP CPUPROFILE=$T/gacc$hz.prof CPUPROFILE_FREQUENCY=$hz $SPLIT >/dev/null 2>&1
		printf '  gperf   %4s Hz: %s\n' $hz "$(share "$T/gacc$hz.prof")"
	fi
done
