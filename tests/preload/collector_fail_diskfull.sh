#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# collector_fail_diskfull.sh - prof_prefix on a full file system (a 256 KiB tmpfs filled up):
# the host runs on and exits normally, one "heaptap: " line on stderr, the statistics count
# the error, and no torn or temporary dump file is left behind.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
[ "$PROFILER" = heaptap ] || ht_skip "heaptap-only behaviour"
mnt=$TMP/full
mkdir -p "$mnt"
trap 'umount "$mnt" 2>/dev/null; rm -rf "$TMP"' EXIT
mount -t tmpfs -o size=256k tmpfs "$mnt" 2>/dev/null || ht_skip "cannot mount a small tmpfs here (needs root with CAP_SYS_ADMIN)"
dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null
echo "filler: $(stat -c %s "$mnt/fill") bytes; free: $(df --output=avail -B1 "$mnt" | tail -n 1) bytes"
ht_failpath_run "$mnt/ht" "full disk" || exit 1
left=$(ls -A "$mnt" | grep -v '^fill$')
[ -z "$left" ] || ht_fail "files left on the full disk: $left"
