#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# perf_rule_cache.sh - the CFI rule cache makes about one parse per distinct return address in
# steady state (issue 13): bash sampling every allocation through a loop, run for N and for 3N
# iterations, parses (statistics: sampler.unwind_rule_parses) about as many rules either way,
# and far fewer than it takes samples. A direct-mapped cache made ~25 times more parses than
# there are return addresses here, growing with the run.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
command -v bash >/dev/null || ht_skip "no bash"
cat >"$TMP/show.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
__attribute__((destructor)) static void show(void)
{
	long (*f)(char *, size_t) = (long (*)(char *, size_t))dlsym(RTLD_DEFAULT, "heaptap_stats_json");
	static char b[1 << 16];
	const char *p, *q;
	if (f && f(b, sizeof b) > 0 && (p = strstr(b, "\"unwind_rule_parses\":")) && (q = strstr(b, "\"samples\":")))
		fprintf(stderr, "parses %ld samples %ld\n", atol(p + 21), atol(q + 10));
}
C
sed -i '1i #include <stdlib.h>' "$TMP/show.c"
cc -shared -fPIC -o "$TMP/show.so" "$TMP/show.c" -ldl || ht_fail "cannot build the stats reader"
run() {
	LD_PRELOAD="$HEAPTAP_LIB $TMP/show.so" HEAPTAP_CONF=lg_prof_sample:0,prof_prefix: \
		bash -c 'for i in $(seq 1 '"$1"'); do x="$x$i"; y=${x:3:9}; z=$(( i * 7 )); done; echo done' 2>&1 >/dev/null |
		awk '/^parses/ {print $2, $4}'
}
read -r p1 s1 < <(run 2000)
read -r p3 s3 < <(run 6000)
echo "2000 iterations: $p1 parses, $s1 samples; 6000 iterations: $p3 parses, $s3 samples"
[ -n "$p1" ] && [ -n "$p3" ] || ht_fail "no statistics read"
[ "$s3" -gt $((2 * s1)) ] || ht_fail "the longer run did not sample more"
[ "$p3" -le $((p1 + p1 / 5 + 50)) ] || ht_fail "rule parses grow with the run: $p1 -> $p3 (cache thrashing)"
[ $((p3 * 50)) -lt "$s3" ] || ht_fail "more than one parse per 50 samples"
echo ok
