#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# options_env.sh - HEAPTAP_CONF end to end: bad keys and values are reported once each on
# stderr with the documented wording while the program runs on with the defaults; prof:false
# and an empty prof_prefix write nothing; prof_format:pprof writes only the .pb.gz; prof_accum
# fills the brackets; verbose prints the start-up line.
set -u
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cat >"$d/p.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	for (int i = 0; i < 64; i++) {
		void *volatile q = malloc(1 << 16); /* volatile: the pair must not be optimised away */
		free(q);
	}
	void *keep = malloc(1 << 20);
	printf("ran %p\n", keep);
	return 0;
}
C
cc -O1 -g -o "$d/p" "$d/p.c" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
run() { # dir conf -> stdout in $d/out, stderr in $d/err
	mkdir -p "$d/$1"
	(cd "$d/$1" && HEAPTAP_CONF="$2" LD_PRELOAD="$HEAPTAP_LIB" "$d/p" >"$d/out" 2>"$d/err")
}

run bad 'bogus:1,lg_prof_sample:99,prof_final:maybe' || bad "program failed with bad options"
cat "$d/err"
grep -q '^ran ' "$d/out" || bad "program did not run"
[ "$(grep -c . "$d/err")" = 3 ] || bad "expected exactly 3 stderr lines"
grep -qx "heaptap: HEAPTAP_CONF: unknown option 'bogus' (ignored)" "$d/err" || bad "unknown key line"
grep -qx "heaptap: HEAPTAP_CONF: invalid value '99' for lg_prof_sample (expected 0..62; using 19)" "$d/err" || bad "bad value line"
grep -qx "heaptap: HEAPTAP_CONF: invalid value 'maybe' for prof_final (expected true or false; using true)" "$d/err" || bad "bad bool line"
f=$(ls "$d/bad"/heaptap.*.f.heap 2>/dev/null)
[ -n "$f" ] && head -1 "$f" | grep -qx 'heap_v2/524288' || bad "defaults not in force after bad options"

run off 'prof:false' || bad "prof:false run failed"
[ -z "$(ls "$d/off")" ] || bad "prof:false wrote $(ls "$d/off")"
[ -s "$d/err" ] && bad "prof:false printed: $(cat "$d/err")"

run noprefix 'prof_prefix:' || bad "empty prefix run failed"
[ -z "$(ls "$d/noprefix")" ] || bad "empty prefix wrote $(ls "$d/noprefix")"

run pb 'prof_format:pprof,prof_prefix:pp' || bad "pprof run failed"
ls "$d/pb"
[ "$(ls "$d/pb" | grep -c '^pp\.[0-9]*\.0\.f\.pb\.gz$')" = 1 ] || bad "pprof: expected one pp.<pid>.0.f.pb.gz"
[ "$(ls "$d/pb" | grep -c '\.heap$')" = 0 ] || bad "pprof only: a .heap was written"

run accum 'prof_accum:true,lg_prof_sample:0,verbose:true' || bad "accum run failed"
f=$(ls "$d/accum"/heaptap.*.f.heap)
# 64 x 64 KiB allocated and freed, 1 MiB kept, stdio's buffer (B bytes): live 2 objects of
# 1048576 + B bytes, cumulative 66 allocations of 5242880 + B bytes
sed -n 2p "$f"
sed -n 2p "$f" | awk '{ gsub(/[\[\]:]/, " "); b = $3 - 1048576; ok = $2 == 2 && b > 0 && b <= 65536 && $4 == 66 && $5 == 5242880 + b; exit !ok }' ||
	bad "accum totals"
grep -q '^heaptap: profiling pid [0-9]*; dumps under prof_prefix$' "$d/err" || bad "verbose line missing: $(cat "$d/err")"
grep -qx 'heaptap: mean sample interval R = 1 bytes' "$d/err" || bad "verbose R line"

# the statistics are one valid JSON object whose numbers agree with what the program did
cat >"$d/s.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	long (*stats)(char *, size_t) = (long (*)(char *, size_t))dlsym(RTLD_DEFAULT, "heaptap_stats_json");
	if (!stats)
		return 2;
	for (int i = 0; i < 1000; i++) {
		void *volatile p = malloc(100);
		free(p);
	}
	static char buf[1 << 16];
	if (stats(buf, sizeof buf) <= 0)
		return 3;
	puts(buf);
	return 0;
}
C
cc -O1 -o "$d/s" "$d/s.c" -ldl || exit 1
if command -v python3 >/dev/null; then
	(cd "$d" && HEAPTAP_CONF=lg_prof_sample:0,prof_final:false LD_PRELOAD="$HEAPTAP_LIB" ./s >"$d/stats.json") || bad "stats program failed"
	python3 - "$d/stats.json" <<'PY' || bad "statistics JSON"
import json, sys
s = json.load(open(sys.argv[1]))
print({k: s[k] for k in ("calls", "sampler", "collector_table_bytes", "allocated_bytes")})
assert s["calls"]["malloc"] >= 1000 and "free" not in s["calls"], s["calls"]
assert s["sampler"]["samples"] >= 1000, s["sampler"]
assert s["allocated_bytes"] >= 100000
# the size histogram and free's call count are kept only with stats_exact (their fast-path
# increments cost ~1 % of a malloc-heavy program's CPU)
assert "size_histogram_log2" not in s, "histogram without stats_exact"
assert s["options"]["lg_prof_sample"] == 0 and s["options"]["prof_final"] is False
assert 0 < s["collector_table_bytes"] <= s["collector_mapped_bytes"]
PY
	(cd "$d" && HEAPTAP_CONF=stats_exact:true,prof_final:false LD_PRELOAD="$HEAPTAP_LIB" ./s >"$d/stats2.json") || bad "stats program failed (stats_exact)"
	python3 - "$d/stats2.json" <<'PY' || bad "statistics JSON with stats_exact"
import json, sys
s = json.load(open(sys.argv[1]))
h = s["size_histogram_log2"]
assert len(h) == 48 and h[6] >= 1000, h  # 100 bytes: floor(log2) = 6
assert s["calls"]["malloc"] >= 1000 and s["calls"]["free"] >= 1000, s["calls"]
PY
fi

[ $fail -eq 0 ] && echo ok
exit $fail
