#!/bin/bash
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
p1=$(irefs 20000); p2=$(irefs 40000)
h1=$(irefs 20000 ht); h2=$(irefs 40000 ht)
for v in "$p1" "$p2" "$h1" "$h2"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "FAIL: callgrind gave no instruction count ($p1 $p2 $h1 $h2)"; exit 1; }
done
plain=$(( (p2 - p1) / 20000 )); ht=$(( (h2 - h1) / 20000 ))
extra=$(( ((h2 - h1) - (p2 - p1)) / 20000 ))
echo "instructions per malloc/free pair: plain $plain, heaptap $ht, extra $extra (budget 24)"
[ "$extra" -ge 10 ] || { echo "FAIL: extra $extra < 10: the preload did not interpose?"; exit 1; }
[ "$extra" -le 24 ] || { echo "FAIL: fast paths cost $extra instructions per pair (> 24)"; exit 1; }

# free(NULL): the same pairs plus one free(NULL) each, minus the pairs alone
pn=$(irefs 40000 "" null); hn=$(irefs 40000 ht null)
for v in "$pn" "$hn"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "FAIL: callgrind gave no instruction count ($pn $hn)"; exit 1; }
done
nplain=$(( (pn - p2) / 40000 )); nht=$(( (hn - h2) / 40000 ))
nextra=$(( ((hn - h2) - (pn - p2)) / 40000 ))
echo "instructions per free(NULL): plain $nplain, heaptap $nht, extra $nextra (budget 14)"
[ "$nplain" -ge 1 ] || { echo "FAIL: free(NULL) cost nothing plain: the program did not call it?"; exit 1; }
[ "$nextra" -ge 5 ] || { echo "FAIL: free(NULL) extra $nextra < 5: the preload did not interpose it?"; exit 1; }
[ "$nextra" -le 14 ] || { echo "FAIL: free(NULL) costs $nextra extra instructions (> 14)"; exit 1; }
echo "ok"
