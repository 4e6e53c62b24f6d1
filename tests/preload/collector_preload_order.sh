#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# collector_preload_order.sh - an allocator preloaded before libheaptap.so takes the program's
# malloc, and heaptap would write empty dumps without a word (issue 14, item 9): it must say so
# once on stderr, naming the allocator; preloaded first, it says nothing.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
[ -f "$JEMALLOC_SO" ] || ht_skip "$JEMALLOC_SO is not installed"
err=$(LD_PRELOAD="$JEMALLOC_SO $HEAPTAP_LIB" HEAPTAP_CONF=prof_prefix: /bin/echo hi 2>&1 >/dev/null)
echo "jemalloc first: $err"
[ "$(echo "$err" | grep -c "^heaptap: the program's malloc is $JEMALLOC_SO, not heaptap's")" = 1 ] ||
	ht_fail "no single warning naming $JEMALLOC_SO"
err=$(LD_PRELOAD="$HEAPTAP_LIB $JEMALLOC_SO" HEAPTAP_CONF=prof_prefix: /bin/echo hi 2>&1 >/dev/null)
[ -z "$err" ] || ht_fail "heaptap first: unexpected stderr '$err'"
echo ok
