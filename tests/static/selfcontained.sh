#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# selfcontained.sh - libheaptap.so needs nothing beyond the C library and loads on glibc 2.17
# and later (issue 15, "a self-contained collector"): `readelf -d` lists no NEEDED library but
# glibc's own (libc.so.6, libm.so.6, libdl.so.2, libpthread.so.0, ld-linux-x86-64.so.2: no
# libunwind, no zlib), and `objdump -T` shows no symbol version above GLIBC_2.17 (the
# Makefile's -include lib/glibc_compat.h binds re-versioned functions to their old versions).
# The library then still loads and profiles a program here.
set -u
lib="${HEAPTAP_LIB:-build/libheaptap.so}"
[ -f "$lib" ] || { echo "FAIL: no $lib (run make)"; exit 1; }
command -v readelf >/dev/null && command -v objdump >/dev/null || { echo "skip: binutils not installed"; exit 77; }
fail=0

needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "NEEDED: $(echo $needed)"
[ -n "$needed" ] || { echo "FAIL: readelf -d shows no NEEDED entry at all"; exit 1; }
echo "$needed" | grep -qx 'libc.so.6' || { echo "FAIL: libc.so.6 is not NEEDED"; fail=1; }
for n in $needed; do
	case $n in
	libc.so.6 | libm.so.6 | libdl.so.2 | libpthread.so.0 | ld-linux-x86-64.so.2) ;;
	*) echo "FAIL: NEEDED $n is not part of glibc"; fail=1 ;;
	esac
done

# every version the library references: GLIBC_2.2.5 ... GLIBC_2.17, nothing newer
vers=$(objdump -T "$lib" | grep -oE 'GLIBC_[0-9]+\.[0-9]+(\.[0-9]+)?' | sort -u -V)
echo "versions: $(echo $vers)"
echo "$vers" | grep -qx 'GLIBC_2.2.5' || { echo "FAIL: objdump -T shows no GLIBC_2.2.5 symbol (cannot read the table?)"; fail=1; }
newest=$(echo "$vers" | tail -1)
for v in $vers; do
	minor=${v#GLIBC_2.}; minor=${minor%%.*}
	if [ "${v%%.*}" != GLIBC_2 ] || [ "$minor" -gt 17 ]; then
		echo "FAIL: symbols of $v (newer than GLIBC_2.17):"
		objdump -T "$lib" | grep -F "($v)" | awk '{print "   ", $NF}'
		fail=1
	fi
done
echo "newest: $newest"
# the version requirements (.gnu.version_r) agree
readelf -V "$lib" | grep -oE 'Name: GLIBC_[0-9.]+' | while read -r _ v; do
	minor=${v#GLIBC_2.}; minor=${minor%%.*}
	[ "$minor" -le 17 ] || { echo "FAIL: version requirement $v"; exit 1; }
done || fail=1
# no libunwind or zlib symbol reached the library by another way
objdump -T "$lib" | grep -E '\b(unw_|_U[Lx]|_Unwind_|deflate|inflate|crc32)' &&
	{ echo "FAIL: libunwind or zlib symbols are imported"; fail=1; }

# and it still loads and writes a profile
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
LD_PRELOAD="$lib" HEAPTAP_CONF="prof_prefix:$d/ht,lg_prof_sample:0,prof_format:heap_v2+pprof" \
	ls / >/dev/null || { echo "FAIL: ls under the library failed"; fail=1; }
ls "$d"/ht.*.f.heap "$d"/ht.*.f.pb.gz >/dev/null 2>&1 || { echo "FAIL: no final dumps in both formats"; fail=1; }
if command -v gzip >/dev/null; then
	gzip -t "$d"/ht.*.f.pb.gz || { echo "FAIL: the collector's .pb.gz is not valid gzip"; fail=1; }
fi
[ $fail -eq 0 ] && echo ok
exit $fail
