#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sec_address_space.sh - the collector reserves address space lazily, sized to need (issue 14
# item 9): a program that allocates once and reads its VmSize grows by less than 12 MiB under
# heaptap (the library, its tables' one-page directories, the sampled-pointer filter), where
# the fixed tables of before reserved ~40 MB at start, so a host under a tight RLIMIT_AS lost
# its own thread stacks. A second run with lg_prof_sample:0 and 200,000 live objects checks
# the tables then grow past their first directory page and still work.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
[ "$PROFILER" = heaptap ] || ht_skip "heaptap-only behaviour"
cat >"$TMP/vm.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	void **v = malloc(n * sizeof *v);
	for (long i = 0; i < n; i++)
		v[i] = malloc(24);
	FILE *f = fopen("/proc/self/status", "r");
	char l[256];
	while (fgets(l, sizeof l, f))
		if (!strncmp(l, "VmSize:", 7))
			printf("%ld\n", atol(l + 7));
	return 0;
}
C
cc -O1 -o "$TMP/vm" "$TMP/vm.c" || ht_fail "cannot build the test program"
bare=$("$TMP/vm")
prof=$(HEAPTAP_CONF=prof_final:false LD_PRELOAD=$HEAPTAP_LIB "$TMP/vm")
echo "VmSize: bare $bare kB, under heaptap $prof kB (+$((prof - bare)) kB)"
[ $((prof - bare)) -lt $((12 * 1024)) ] || ht_fail "the collector reserves $((prof - bare)) kB at start (12 MiB allowed)"
big=$(HEAPTAP_CONF=prof_final:false,lg_prof_sample:0 LD_PRELOAD=$HEAPTAP_LIB "$TMP/vm" 200000) ||
	ht_fail "200,000 sampled objects failed"
echo "with 200,000 sampled live objects: $big kB"
[ "$big" -gt "$prof" ] || ht_fail "no growth with 200,000 live samples?"
echo ok
