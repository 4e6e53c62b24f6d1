#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# collector_fail_nodir.sh - prof_prefix in a directory that does not exist: the host runs on
# and exits normally, manual and final dumps fail quietly (one "heaptap: " stderr line in
# all), a dump to a good path still works, and the statistics count the error.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
[ "$PROFILER" = heaptap ] || ht_skip "heaptap-only behaviour"
ht_failpath_run "$TMP/no/such/dir/ht" "missing directory" || exit 1
[ ! -e "$TMP/no" ] || ht_fail "the collector created the missing directory"
