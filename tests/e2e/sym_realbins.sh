#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sym_realbins.sh - every call site of two real binaries heaptap ships (the CLI, -O2 C with
# libiberty linked in, and the collector, a -fPIC shared library) resolves to the same chain of
# functions, files and lines as binutils addr2line or llvm-symbolizer gives.
. "$(dirname "$0")/sym_common.inc"
for bin in "$HEAPTAP_PLAIN" "$HEAPTAP_LIB"; do
	[ -f "$bin" ] || fail "$bin is not built"
	cp "$bin" "$T/bin" # a private copy: a concurrent make may relink the original
	callsites "$T/bin" >"$T/sites"
	[ "$(wc -l <"$T/sites")" -gt 500 ] || fail "too few call sites in $bin"
	echo "== $bin"
	compare_symbolizers "$T/bin" "$T/sites"
done
