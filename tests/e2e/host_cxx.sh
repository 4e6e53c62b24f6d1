#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# host_cxx.sh - a C++ program with exceptions, std containers and threads under the collector:
# same output and exit code; cxx_hog's 64 MiB (operator new[]) is attributed to cxx_hog.
. "$(dirname "$0")/lib/host.sh"
bin=$HOST_TMP/hog_cxx
c++ -std=c++17 -O2 -g -pthread -o "$bin" "$ROOT/tests/progs/host/hog.cc" || host_fail "c++ failed"
host_compare cxx "$bin"
for tag in cxx.default cxx.lg_prof_sample:0; do
	host_check_parse "$tag"
	dump=$(host_dumps "$tag" | head -n 1)
	host_top_has "$tag" "$dump" "$bin" "cxx_hog" 85
done
host_jeprof_reads "$(host_dumps cxx.default)" "$bin"
echo "cxx ok"
