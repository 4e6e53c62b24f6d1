#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# host_rust.sh - a Rust program on the system allocator under the collector: same output and
# exit code; rust_hog's 64 MiB is attributed to it (demangled Rust name).
. "$(dirname "$0")/lib/host.sh"
command -v rustc >/dev/null || host_skip "rustc not installed"
bin=$HOST_TMP/hog_rust
rustc -O -g -C force-frame-pointers=no -o "$bin" "$ROOT/tests/progs/host/hog.rs" 2>"$HOST_TMP/rustc.err" || { cat "$HOST_TMP/rustc.err"; host_fail "rustc failed"; }
host_compare rust "$bin"
for tag in rust.default rust.lg_prof_sample:0; do
	host_check_parse "$tag"
	dump=$(host_dumps "$tag" | head -n 1)
	host_top_has "$tag" "$dump" "$bin" "hog::rust_hog" 85
done
echo "rust ok"
