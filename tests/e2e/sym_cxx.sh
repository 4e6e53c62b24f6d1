#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sym_cxx.sh - C++ names: namespaces, templates with non-type parameters, member and free
# operator overloads, static members, anonymous namespaces and lambdas come out demangled
# (as addr2line -C prints them) at every call site, mangled with --no-demangle, and every call
# site matches addr2line or llvm-symbolizer.
. "$(dirname "$0")/sym_common.inc"
src=$ROOT/tests/progs/sym_cxx.cc
g++ -O2 -g -o "$T/cxx" "$src" || fail "cannot build $src"
callsites "$T/cxx" >"$T/sites"
"$HT" addr2line -f -i -C -e "$T/cxx" <"$T/sites" >"$T/out" || fail "heaptap addr2line failed"
for name in 'shapes::detail::Pool<int, 3>::operator+=(int const&)' \
	'shapes::detail::Pool<int, 3>::make()' \
	'shapes::operator+(shapes::Vec const&, shapes::Vec const&)' \
	'(anonymous namespace)::hidden(int)' \
	'int*& std::vector<int*, std::allocator<int*> >::emplace_back<int*>(int*&&)'; do
	grep -qxF "$name" "$T/out" || fail "no call site resolved to '$name'"
done
grep -q '^main::{lambda(int)#1}::operator()(int) const' "$T/out" || fail "the lambda's name is missing"
grep -q '^_Z' "$T/out" && fail "a name stayed mangled: $(grep -m1 '^_Z' "$T/out")"

# Without -C (no demangling) the linkage names come through untouched.
"$HT" addr2line -f -e "$T/cxx" <"$T/sites" >"$T/raw" || fail "heaptap addr2line failed"
grep -qx '_ZN6shapes6detail4PoolIiLi3EEpLERKi' "$T/raw" || fail "mangled operator+= name missing without -C"

compare_symbolizers "$T/cxx" "$T/sites"
