#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# collector_fail_readonly.sh - prof_prefix in a read-only directory (a read-only tmpfs, since
# root ignores permission bits): the host runs on and exits normally, one "heaptap: " line on
# stderr, the statistics count the error, and nothing is written there.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
[ "$PROFILER" = heaptap ] || ht_skip "heaptap-only behaviour"
mnt=$TMP/ro
mkdir -p "$mnt"
trap 'umount "$mnt" 2>/dev/null; rm -rf "$TMP"' EXIT
mount -t tmpfs -o ro,size=1m tmpfs "$mnt" 2>/dev/null || ht_skip "cannot mount a read-only tmpfs here (needs root with CAP_SYS_ADMIN)"
ht_failpath_run "$mnt/ht" "read-only directory" || exit 1
[ -z "$(ls -A "$mnt")" ] || ht_fail "files appeared in the read-only directory: $(ls -A "$mnt")"
