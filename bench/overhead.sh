#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/overhead.sh - collection overhead of heaptap against the peer tools, as ratios to the
# unprofiled run: wall time and peak RSS (GNU time's %M) of a malloc-heavy multi-threaded
# benchmark (bench/mallocbench.c) and of a real program (Debian's python3 with
# PYTHONMALLOC=malloc building dicts, lists and strings), each run unprofiled, under heaptap at
# the default rate, under jemalloc plain and with its profiler, tcmalloc plain and with its
# heap profiler (HEAPPROFILE), and under heaptrack; runs interleaved, REPS (5) repetitions,
# medians (a configuration whose first run takes over SLOW_S, 1 s, runs once: the order of
# magnitude is all its numbers say). CPU time (user+sys) is printed too: on a shared machine
# it is steadier than wall time. For
# mallocbench the wall column is its own clock (best of 5 rounds in the process, 0.1 ms
# resolution) instead of GNU time's 10 ms, which is coarser than the effect on a 0.2 s run;
# it runs with 4 threads (more than this machine's 2 cores), with 2 and with 1, MB_REPS times
# (4 REPS + 1), and "x paired" is the median of per-round ratios. Then a
# peak-RSS check on a 1 GiB live heap (heaptap within 10% of unprofiled).
# It is a benchmark, not a test: it prints numbers; it fails only when the RSS check fails.
# Usage: bench/overhead.sh [REPS]      (run by `make bench` through bench/run.sh)
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
REPS=${1:-${REPS:-5}}
MB_REPS=${MB_REPS:-$((REPS * 4 + 1))} # mallocbench's runs are short: more of them
SLOW_S=${SLOW_S:-1}
B=$ROOT/build/bench
LIB=$ROOT/build/libheaptap.so
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
TC=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4
PY=/usr/bin/python3.11
T=$(mktemp -d)
PUSH_PID=
trap '[ -n "$PUSH_PID" ] && kill "$PUSH_PID" 2>/dev/null; rm -rf "$T"' EXIT
# The push rows (docs/FLEET.md "Cost"): heaptap pushing to a loopback stand-in of Pyroscope's
# Connect API every 1 s and every 15 s (the default).
PUSH_PORT=
if command -v python3 >/dev/null; then
	mkdir -p "$T/push"
	python3 "$(dirname "$0")/../tests/e2e/lib/push_standin.py" connect "$T/push" >/dev/null 2>&1 &
	PUSH_PID=$!
	for _ in $(seq 50); do [ -s "$T/push/port" ] && break; sleep 0.1; done
	PUSH_PORT=$(cat "$T/push/port" 2>/dev/null)
fi
mkdir -p "$B"
cc -std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -pthread -o "$B/mallocbench" bench/mallocbench.c || exit 1
[ -x /usr/bin/time ] || { echo "overhead.sh: GNU time (/usr/bin/time) is missing (apt-get install time)"; exit 1; }

cat >"$T/work.py" <<'PY'
# Allocation-heavy Python: dicts of lists of strings, built and dropped.
for rnd in range(2):
    d = {}
    for i in range(100000):
        d[str(i)] = [i, str(i) * 3, {"k": i, "v": str(i)}]
    s = sum(len(v[1]) for v in d.values())
    del d
print(s)
PY

configs=(none heaptap heaptap-nozone heaptap-oom heaptap-peak heaptap-push1s heaptap-push15s jemalloc jemalloc-prof tcmalloc tcmalloc-heapprof heaptrack)
have() {
	case $1 in
	heaptap-push*) [ -f "$LIB" ] && [ -n "$PUSH_PORT" ] ;;
	heaptap*) [ -f "$LIB" ] && nm -D --defined-only "$LIB" | grep -qw malloc ;;
	jemalloc*) [ -f "$JE" ] ;;
	tcmalloc*) [ -f "$TC" ] ;;
	heaptrack) command -v heaptrack >/dev/null ;;
	*) true ;;
	esac
}

# run CONFIG OUTFILE CMD...: one measured run; appends "wall_s maxrss_kib cpu_s" to OUTFILE.
run() {
	local cfg=$1 out=$2; shift 2
	local pre=() t=$T/time
	rm -rf "$T/d"; mkdir -p "$T/d"
	case $cfg in
	none) pre=(env) ;;
	heaptap) pre=(env LD_PRELOAD="$LIB" HEAPTAP_CONF="prof_prefix:$T/d/ht") ;;
	# without the sampled-object zone: sampled blocks stay in the allocator's heap (the zone
	# also takes them off its arena and mmap paths, which can make heaptap faster than none)
	heaptap-nozone) pre=(env LD_PRELOAD="$LIB" HEAPTAP_CONF="prof_prefix:$T/d/ht,prof_zone:false") ;;
	# the memory-pressure watch (a check every 100 ms on the collector's thread) and the peak
	# profile (a copy of the live sums at every 10 % of growth), at the default rate
	heaptap-oom) pre=(env LD_PRELOAD="$LIB" HEAPTAP_CONF="prof_prefix:$T/d/ht,prof_oom:true") ;;
	heaptap-peak) pre=(env LD_PRELOAD="$LIB" HEAPTAP_CONF="prof_prefix:$T/d/ht,prof_peak:true") ;;
	heaptap-push1s|heaptap-push15s)
		pre=(env LD_PRELOAD="$LIB" HEAPTAP_CONF="prof_prefix:$T/d/ht,push_url:http://127.0.0.1:$PUSH_PORT/push.v1.PusherService/Push,push_interval:${cfg#heaptap-push}") ;;
	jemalloc) pre=(env LD_PRELOAD="$JE") ;;
	jemalloc-prof) pre=(env LD_PRELOAD="$JE" MALLOC_CONF="prof:true,prof_final:true,prof_prefix:$T/d/je") ;;
	tcmalloc) pre=(env LD_PRELOAD="$TC") ;;
	tcmalloc-heapprof) # only the exit dump, like the others (no dump per GiB allocated)
		pre=(env LD_PRELOAD="$TC" HEAPPROFILE="$T/d/tc" HEAP_PROFILE_ALLOCATION_INTERVAL=0 \
			HEAP_PROFILE_INUSE_INTERVAL=0) ;;
	heaptrack) pre=(heaptrack -o "$T/d/heaptrack") ;;
	esac
	if (cd "$T/d" && /usr/bin/time -f "%e %M %U %S" -o "$t" "${pre[@]}" "$@" >"$T/out" 2>"$T/err"); then
		# a program that times itself (mallocbench: "...: 0.1234 s, ...") overrides %e
		local own
		own=$(sed -n 's/.* ops: \([0-9.]*\) s,.*/\1/p' "$T/out" | tail -n 1)
		awk -v own="$own" '{printf "%s %s %.2f\n", own != "" ? own : $1, $2, $3 + $4}' "$t" >>"$out"
	else
		echo "  ($cfg failed: $(tail -n 1 "$T/err"))" >&2
	fi
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR) print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2); else print "nan"}'; }

bench() { # NAME REPS CMD...
	local name=$1 reps=$2; shift 2
	echo "== $name: $*  ($reps runs each, interleaved)"
	local cfg r
	for cfg in "${configs[@]}"; do rm -f "$T/$name.$cfg"; done
	for r in $(seq 1 "$reps"); do
		for cfg in "${configs[@]}"; do
			have "$cfg" || continue
			# Too slow to repeat: one run is enough to show the order of magnitude.
			if [ -s "$T/$name.$cfg" ] && [ "$(awk -v s="$SLOW_S" 'NR==1{print ($1 > s)}' "$T/$name.$cfg")" = 1 ]; then
				continue
			fi
			run "$cfg" "$T/$name.$cfg" "$@"
		done
	done
	local base_t base_m base_c t m c
	base_t=$(cut -d' ' -f1 "$T/$name.none" | median)
	base_m=$(cut -d' ' -f2 "$T/$name.none" | median)
	base_c=$(cut -d' ' -f3 "$T/$name.none" | median)
	# "x paired": the median of each run's wall time over the unprofiled run of the same round
	# (drift of the machine's load between rounds cancels; steadier than the ratio of medians)
	printf '%-20s %5s %9s %7s %8s %9s %7s %12s %7s\n' config runs "wall s" "x none" "x paired" \
		"cpu s" "x none" "peak RSS MiB" "x none"
	for cfg in "${configs[@]}"; do
		if [ ! -s "$T/$name.$cfg" ]; then printf '%-20s %5s\n' "$cfg" "n/a"; continue; fi
		t=$(cut -d' ' -f1 "$T/$name.$cfg" | median)
		m=$(cut -d' ' -f2 "$T/$name.$cfg" | median)
		c=$(cut -d' ' -f3 "$T/$name.$cfg" | median)
		local paired
		paired=$(paste -d' ' "$T/$name.none" "$T/$name.$cfg" | awk 'NF == 6 {print $4 / $1}' | median)
		printf '%-20s %5d %9.4f %7.3f %8.3f %9.2f %7.2f %12.1f %7.2f\n' "$cfg" "$(wc -l <"$T/$name.$cfg")" \
			"$t" "$(echo "$t / $base_t" | bc -l)" "$paired" "$c" "$(echo "$c / $base_c" | bc -l)" \
			"$(echo "$m / 1024" | bc -l)" "$(echo "$m / $base_m" | bc -l)"
	done
	# The profilers against their own allocator's plain run.
	for pair in jemalloc-prof:jemalloc tcmalloc-heapprof:tcmalloc; do
		local p=${pair%%:*} q=${pair##*:}
		[ -s "$T/$name.$p" ] && [ -s "$T/$name.$q" ] || continue
		printf '%-20s time x%.3f, peak RSS x%.2f against %s alone\n' "$p" \
			"$(echo "$(cut -d' ' -f1 "$T/$name.$p" | median) / $(cut -d' ' -f1 "$T/$name.$q" | median)" | bc -l)" \
			"$(echo "$(cut -d' ' -f2 "$T/$name.$p" | median) / $(cut -d' ' -f2 "$T/$name.$q" | median)" | bc -l)" "$q"
	done
	echo
}

bench mallocbench "$MB_REPS" "$B/mallocbench" -t 4 -n 300000 -r 5
bench mallocbench-2t "$MB_REPS" "$B/mallocbench" -t 2 -n 300000 -r 5
bench mallocbench-1t "$MB_REPS" "$B/mallocbench" -t 1 -n 600000 -r 5
if [ -x "$PY" ]; then
	PYTHONMALLOC=malloc bench python "$REPS" "$PY" "$T/work.py"
else
	echo "== python: $PY is missing, skipped"
fi

echo "== peak RSS with 1 GiB live (mallocbench -L 1024), median of $REPS"
rc=0
if have heaptap; then
	rm -f "$T/big.none" "$T/big.heaptap"
	for r in $(seq 1 "$REPS"); do
		run none "$T/big.none" "$B/mallocbench" -L 1024
		run heaptap "$T/big.heaptap" "$B/mallocbench" -L 1024
	done
	mn=$(cut -d' ' -f2 "$T/big.none" | median)
	mh=$(cut -d' ' -f2 "$T/big.heaptap" | median)
	ratio=$(echo "$mh / $mn" | bc -l)
	printf 'unprofiled %.1f MiB, heaptap %.1f MiB: x%.3f (limit x1.10)\n' \
		"$(echo "$mn / 1024" | bc -l)" "$(echo "$mh / 1024" | bc -l)" "$ratio"
	if [ "$(echo "$ratio > 1.10" | bc -l)" = 1 ]; then echo "FAIL: heaptap's peak RSS overhead exceeds 10%"; rc=1; fi
else
	echo "heaptap collector not built (or not yet exporting malloc): skipped"
fi
exit $rc
