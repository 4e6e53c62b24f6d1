#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/perf_fastpath.sh - bench/fastpath (malloc and free of unsampled SIZE-byte blocks,
# best round) interleaved N times without and with LD_PRELOAD, for the current build and
# optionally a second build (BASE=path.so) in the same runs; prints median ns per call and the
# ratios to plain. Like bench/fastpath.sh plus the before/after column. Checks nothing.
set -u
cd "$(dirname "$0")/.."
n=${N:-9}
size=${SIZE:-32}
lib=${LIB:-$PWD/build/libheaptap.so}
base=${BASE:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p build/bench
cc -O2 -g -o build/bench/fastpath bench/fastpath.c || exit 1
names="plain heaptap"
[ -n "$base" ] && names="plain base heaptap"
for i in $(seq "$n"); do
	for k in $names; do
		case $k in
		plain) build/bench/fastpath "$size" ;;
		base) HEAPTAP_CONF=prof_final:false LD_PRELOAD=$base build/bench/fastpath "$size" ;;
		heaptap) HEAPTAP_CONF=prof_final:false LD_PRELOAD=$lib build/bench/fastpath "$size" ;;
		esac | sed 's/[a-z_]*=//g' >>"$T/$k"
	done
done
med() { awk -v c="$2" '{print $c}' "$1" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
pm=$(med "$T/plain" 1); pf=$(med "$T/plain" 2)
echo "size $size bytes, $n interleaved runs, median of best-round ns per call"
echo "plain:   malloc $pm ns, free $pf ns"
for k in $names; do
	[ "$k" = plain ] && continue
	m=$(med "$T/$k" 1); f=$(med "$T/$k" 2)
	echo "$k: malloc $m ns (x$(echo "scale=3; $m / $pm" | bc)), free $f ns (x$(echo "scale=3; $f / $pf" | bc))"
done
