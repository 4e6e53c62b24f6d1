#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# host_java.sh - a JVM (many threads, its own signal handling, GC) under the collector at the
# default rate and at lg_prof_sample:0: same output and exit code as unprofiled; its native
# memory (64 MiB of direct buffers) is attributed to os::malloc / Unsafe_AllocateMemory0.
. "$(dirname "$0")/lib/host.sh"
command -v javac >/dev/null && command -v java >/dev/null || host_skip "java/javac not installed"
cp "$ROOT/tests/progs/host/Hog.java" "$HOST_TMP/" && (cd "$HOST_TMP" && javac Hog.java) || host_fail "javac failed"
host_compare java java -Xmx256m -cp "$HOST_TMP" Hog
java_bin=$(readlink -f "$(command -v java)")
libjvm=$(dirname "$java_bin")/../lib/server/libjvm.so
for tag in java.default java.lg_prof_sample:0; do
	host_check_parse "$tag"
	# The biggest final dump is the JVM's (the java launcher re-execs itself at most once).
	dump=$(ls -S $(host_dumps "$tag") | head -n 1)
	host_top_has "$tag" "$dump" "$java_bin" "os::malloc" 80
	# 64 MiB of direct buffers out of everything the JVM keeps: Total must be at least that.
	total=$("$HEAPTAP" top --show_bytes --no-symbolize "$dump" | awk '/^Total:/ { print $2 }')
	echo "$tag: total live $total bytes"
	# 64 buffers of 1 MiB at R = 512 KiB: relative sigma sqrt((1-p)/(64 p)) = 4.9 %, 3 sigma below the
	# truth is 54 MiB; 48 MiB leaves room (docs/DESIGN.md).
	[ "${total:-0}" -ge $((48 << 20)) ] || host_fail "$tag: total $total < 48 MiB"
done
host_jeprof_reads "$(ls -S $(host_dumps java.default) | head -n 1)" "$java_bin"
echo "java ok"
