#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/fastpath.sh - the collector's fast-path overhead: runs bench/fastpath with and without
# LD_PRELOAD=build/libheaptap.so, interleaved (N pairs), and prints the median per-call costs
# of malloc and free and their ratios (preloaded / plain). Prints numbers; checks nothing.
set -u
cd "$(dirname "$0")/.."
n=${N:-9}
size=${SIZE:-32}
mkdir -p build/bench
cc -O2 -g -o build/bench/fastpath bench/fastpath.c || exit 1
plain_m=() plain_f=() pre_m=() pre_f=()
for i in $(seq "$n"); do
	read -r m f < <(build/bench/fastpath "$size" | sed 's/[a-z_]*=//g')
	plain_m+=("$m"); plain_f+=("$f")
	read -r m f < <(HEAPTAP_CONF=prof_final:false LD_PRELOAD="$PWD/build/libheaptap.so" build/bench/fastpath "$size" | sed 's/[a-z_]*=//g')
	pre_m+=("$m"); pre_f+=("$f")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
pm=$(median "${plain_m[@]}"); pf=$(median "${plain_f[@]}")
hm=$(median "${pre_m[@]}"); hf=$(median "${pre_f[@]}")
echo "size $size bytes, $n interleaved runs, median of best-round ns per call"
echo "malloc: plain $pm ns, heaptap $hm ns, ratio $(echo "scale=2; $hm / $pm" | bc)"
echo "free:   plain $pf ns, heaptap $hf ns, ratio $(echo "scale=2; $hf / $pf" | bc)"
