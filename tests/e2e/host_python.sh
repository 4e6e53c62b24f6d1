#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# host_python.sh - python3 running an allocation-heavy script under the collector (default rate
# and every allocation): same output and exit code; the 48 MiB of bytearrays are in the manual dump it takes through the C API (ctypes).
. "$(dirname "$0")/lib/host.sh"
command -v python3 >/dev/null || host_skip "python3 not installed"
# The interpreter itself, not a version manager's shim script.
py=$(readlink -f "$(python3 -c 'import sys; print(sys.executable)')")
host_compare python "$py" "$ROOT/tests/progs/host/hog.py"
for tag in python.default python.lg_prof_sample:0; do
	host_check_parse "$tag"
	dump=$(host_dumps "$tag" m | head -n 1)
	[ -n "$dump" ] || host_fail "$tag: no manual dump (the script calls heaptap_dump through ctypes)"
	total=$("$HEAPTAP" top --show_bytes --no-symbolize "$dump" | awk '/^Total:/ { print $2 }')
	echo "$tag: total live $total bytes"
	# 48 objects of 1 MiB at R = 512 KiB: p = 1-exp(-2) = 0.865, relative sigma = sqrt((1-p)/(48 p)) = 5.7 %,
	# so 3 sigma below the truth is 40 MiB; 36 MiB leaves room for it (docs/DESIGN.md).
	[ "${total:-0}" -ge $((36 << 20)) ] || host_fail "$tag: total $total < 36 MiB (48 MiB of bytearrays are live)"
done
host_jeprof_reads "$(host_dumps python.default m | head -n 1)" "$py"
echo "python ok"
