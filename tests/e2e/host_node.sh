#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# host_node.sh - node (V8, libuv threads) under the collector: same output and exit code; the
# 48 MiB of Buffers are live in the final dump.
. "$(dirname "$0")/lib/host.sh"
command -v node >/dev/null || host_skip "node not installed"
node_bin=$(readlink -f "$(command -v node)")
HOST_CONF=prof_time_interval:200ms host_compare node "$node_bin" "$ROOT/tests/progs/host/hog.js"
for tag in node.default node.lg_prof_sample:0; do
	host_check_parse "$tag"
	total=$(host_max_total "$tag" t)
	echo "$tag: largest live total among $(host_dumps "$tag" t | wc -l) time-interval dumps: $total bytes"
	# 48 Buffers of 1 MiB at R = 512 KiB: relative sigma 5.7 %, 3 sigma below the truth is 40 MiB;
	# the largest of several dumps only helps. 36 MiB leaves room (docs/DESIGN.md).
	[ "${total:-0}" -ge $((36 << 20)) ] || host_fail "$tag: total $total < 36 MiB (48 MiB of Buffers are live)"
done
echo "node ok"
