#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sec_address_space.sh - the collector reserves address space lazily, sized to need (issue 14
# item 9), where the fixed tables of before reserved ~40 MB at start, so a host under a tight
# RLIMIT_AS lost its own thread stacks. A program reads its VmSize: with no sample taken (a
# period of 2^40 bytes) heaptap adds less than 8 MiB (the library, its tables' one-page
# directories, the sampled-pointer filter); after its first samples at the default period
# (100,000 blocks of 100 bytes: ~19 samples, served by the sampled-object zone) less than
# 12 MiB (the zone's first slab and its index, the unwinder's caches, the stack table's
# first chunks). The second bound failed at random before the zone's index was mapped per
# slab (4 MiB for the whole slab region at the first sample: 12.4 MiB then, whenever one of
# the program's few allocations happened to be sampled). A last run with lg_prof_sample:0
# and 200,000 live objects checks the tables grow past their first directory page and still
# work.
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
	long n = argc > 1 ? atol(argv[1]) : 1, churn = argc > 2 ? atol(argv[2]) : 0;
	void **v = malloc(n * sizeof *v);
	for (long i = 0; i < n; i++)
		v[i] = malloc(24);
	for (long i = 0; i < churn; i++) {
		void *volatile p = malloc(100);
		free(p);
	}
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
prof=$(HEAPTAP_CONF=prof_final:false,lg_prof_sample:40 LD_PRELOAD=$HEAPTAP_LIB "$TMP/vm")
echo "VmSize: bare $bare kB, under heaptap with no sample $prof kB (+$((prof - bare)) kB)"
[ $((prof - bare)) -lt $((8 * 1024)) ] || ht_fail "the collector reserves $((prof - bare)) kB at start (8 MiB allowed)"
bare2=$("$TMP/vm" 1 100000)
sampled=$(HEAPTAP_CONF=prof_final:false LD_PRELOAD=$HEAPTAP_LIB "$TMP/vm" 1 100000)
echo "VmSize after the first samples: bare $bare2 kB, under heaptap $sampled kB (+$((sampled - bare2)) kB)"
[ $((sampled - bare2)) -lt $((12 * 1024)) ] ||
	ht_fail "the collector reserves $((sampled - bare2)) kB after its first samples (12 MiB allowed)"
big=$(HEAPTAP_CONF=prof_final:false,lg_prof_sample:0 LD_PRELOAD=$HEAPTAP_LIB "$TMP/vm" 200000) ||
	ht_fail "200,000 sampled objects failed"
echo "with 200,000 sampled live objects: $big kB"
[ "$big" -gt "$prof" ] || ht_fail "no growth with 200,000 live samples?"
echo ok
