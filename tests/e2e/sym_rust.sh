#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sym_rust.sh - Rust names: legacy mangling (_ZN...17h<hash>E, hash dropped) and v0 (_R...)
# come out demangled at every call site, and every call site matches addr2line or
# llvm-symbolizer (function, file, line, inline chain).
. "$(dirname "$0")/sym_common.inc"
PATH=$PATH:$HOME/.cargo/bin:/root/.cargo/bin
command -v rustc >/dev/null || skip "rustc is not installed"
src=$ROOT/tests/progs/sym_rust.rs
# Legacy is the default mangling of stable rustc; v0 is asked for explicitly.
rustc -g -C opt-level=1 -o "$T/legacy" "$src" 2>"$T/rustc.log" || { cat "$T/rustc.log"; fail "rustc failed"; }
rustc -g -C opt-level=1 -C symbol-mangling-version=v0 -o "$T/v0" "$src" 2>"$T/rustc.log" || { cat "$T/rustc.log"; fail "rustc -C symbol-mangling-version=v0 failed"; }
nm "$T/legacy" | grep -q '_ZN.*10alloc_here17h[0-9a-f]\{16\}E' || fail "the legacy build has no legacy-mangled alloc_here"
nm "$T/v0" | grep -q '_R.*10alloc_here' || fail "the v0 build has no v0-mangled alloc_here"

check() { # binary, expected names...
	local bin=$1; shift
	callsites "$bin" >"$T/sites"
	"$HT" addr2line -f -i -C -e "$bin" <"$T/sites" >"$T/out" || fail "heaptap addr2line failed on $bin"
	for name in "$@"; do
		grep -qxF "$name" "$T/out" || fail "$(basename "$bin"): no call site resolved to '$name'"
	done
	! grep -E '^(_ZN|_R[A-Z])|::h[0-9a-f]{16}$' "$T/out" | head -n 3 | grep . ||
		fail "$(basename "$bin"): names stayed mangled or kept their hash"
	compare_symbolizers "$bin" "$T/sites"
}
check "$T/legacy" 'sym_rust::alloc_here' 'sym_rust::inner::Holder<T>::grow' 'sym_rust::main'
check "$T/v0" 'sym_rust::alloc_here' '<sym_rust::inner::Holder<usize>>::grow' 'sym_rust::main'
