#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# perf_fastpath_insns.sh - the instruction budget of the unsampled fast paths, counted by
# callgrind (deterministic, unlike time on a shared machine): the extra instructions heaptap
# adds per malloc(32)/free pair, from the difference of runs with 20000 and 40000 pairs (which
# cancels start-up), with and without LD_PRELOAD. lg_prof_sample:30 keeps the 1.3 MB allocated
# far below one expected sample. Budget: 24 per pair (the fast paths are 10 + 12 today; see
# docs/INTERNALS.md "Fast-path cost"); more means work crept into malloc or free. Then the same
# for free(NULL) (perf_churn's second argument adds one per round): its filter bit is pinned,
# so it leaves the fast path, and must return at once: no table look-up, no lock. Budget: 14
# extra (11 today: the fast path up to the hit, the NULL test, the return).
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
ht_need_prog perf_churn
command -v valgrind >/dev/null || { echo "skip: valgrind not installed"; exit 77; }

irefs() { # irefs N [preload] [null]: instructions of the whole run
	local out=$TMP/cg.$1.${2:-plain}.${3:-}
	if [ -n "${2:-}" ]; then
		valgrind --tool=callgrind --callgrind-out-file="$out.%p" --trace-children=yes \
			env HEAPTAP_CONF=lg_prof_sample:30,prof_final:false LD_PRELOAD="$HEAPTAP_LIB" "$BIN" "$1" ${3:-} 2>&1
	else
		valgrind --tool=callgrind --callgrind-out-file="$out.%p" "$BIN" "$1" ${3:-} 2>&1
	fi | sed -n 's/.*I *refs: *//p' | tr -d , | tail -1
}
# budget WHAT COUNT PLAIN_A PLAIN_B HT_A HT_B MIN MAX: the extra instructions per call of the
# COUNT calls that run B makes more than run A, heaptap's against plain's, within [MIN, MAX]
budget() {
	local what=$1 count=$2 v
	for v in "${@:3:4}"; do
		[[ $v =~ ^[0-9]+$ ]] || { echo "FAIL: $what: callgrind gave no instruction count (${*:3:4})"; exit 1; }
	done
	local plain=$((($4 - $3) / count)) ht=$((($6 - $5) / count))
	local extra=$(((($6 - $5) - ($4 - $3)) / count))
	echo "instructions per $what: plain $plain, heaptap $ht, extra $extra (budget $8)"
	[ "$plain" -ge 1 ] || { echo "FAIL: $what cost nothing plain: the program did not make the calls?"; exit 1; }
	[ "$extra" -ge "$7" ] || { echo "FAIL: $what: extra $extra < $7: the preload did not interpose?"; exit 1; }
	[ "$extra" -le "$8" ] || { echo "FAIL: $what costs $extra extra instructions (> $8)"; exit 1; }
}
p1=$(irefs 20000); p2=$(irefs 40000)
h1=$(irefs 20000 ht); h2=$(irefs 40000 ht)
budget "malloc/free pair" 20000 "$p1" "$p2" "$h1" "$h2" 10 24
# free(NULL): the same pairs plus one free(NULL) each, minus the pairs alone
pn=$(irefs 40000 "" null); hn=$(irefs 40000 ht null)
budget "free(NULL)" 40000 "$p2" "$pn" "$h2" "$hn" 5 14
echo "ok"
