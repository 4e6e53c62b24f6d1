#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cxx_allocators.sh - C++ allocations are sampled exactly once whichever allocator is below
# heaptap: glibc (libstdc++'s operator new calls malloc), jemalloc and tcmalloc (their own
# operator new/delete never reach malloc). build/progs/cxx_alloc_sites keeps known live bytes
# through new, new[], nothrow new/new[] and aligned new/new[] and frees the rest with sized
# and aligned deletes; at lg_prof_sample:0 `heaptap top --show_bytes` must give each site its
# exact bytes and churn none, and the output (which includes how many impossible requests
# threw std::bad_alloc or returned NULL) and exit code must equal the unprofiled run's.
# The statistics must show at least the program's 6250 operator new and 6000 operator delete
# calls. Default-rate runs under each allocator must just behave the same.
set -u
prog="$HEAPTAP_BUILD/progs/cxx_alloc_sites"
[ -x "$prog" ] || { echo "no $prog (run make progs)"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d" || exit 1
want_out=$("$prog")
want_rc=$?
fail=0
# site bytes: count x size (see tests/progs/cxx_alloc_sites.cc)
sites='site_new:4800 site_new_arr:50000 site_nothrow:720 site_nothrow_arr:10240
 site_aligned:5120 site_aligned_arr:3840'
tested=0
for alloc in glibc /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/x86_64-linux-gnu/libtcmalloc.so.4; do
	pre="$HEAPTAP_LIB"
	if [ "$alloc" != glibc ]; then
		if [ ! -f "$alloc" ]; then
			echo "note: $alloc not installed, skipped"
			continue
		fi
		pre="$HEAPTAP_LIB:$alloc"
	fi
	tested=$((tested + 1))
	rm -f ./*.heap
	out=$(CXX_SITES_STATS=1 HEAPTAP_CONF=lg_prof_sample:0 LD_PRELOAD="$pre" "$prog" 2>"$d/stats")
	rc=$?
	nnew=$(grep -o '"new":[0-9]*' "$d/stats" | cut -d: -f2)
	ndel=$(grep -o '"delete":[0-9]*' "$d/stats" | cut -d: -f2)
	if [ "${nnew:-0}" -lt 6250 ] || [ "${ndel:-0}" -lt 6000 ]; then
		echo "FAIL [$alloc]: stats calls new=${nnew:-none} delete=${ndel:-none}, want >= 6250, >= 6000"
		fail=1
	fi
	if [ "$out" != "$want_out" ] || [ $rc -ne $want_rc ]; then
		echo "FAIL [$alloc]: output '$out' rc $rc, unprofiled '$want_out' rc $want_rc"
		fail=1
		continue
	fi
	f=$(ls ./*.f.heap 2>/dev/null | head -1)
	[ -n "$f" ] || { echo "FAIL [$alloc]: no final dump"; fail=1; continue; }
	top=$("$HEAPTAP" top --show_bytes "$prog" "$f" 2>&1)
	for s in $sites; do
		name=${s%%:*} bytes=${s##*:}
		got=$(echo "$top" | awk -v n="$name" '$6 == n && NF == 6 { print $1 }')
		if [ "$got" != "$bytes" ]; then
			echo "FAIL [$alloc]: $name holds '${got:-nothing}' bytes, want $bytes"
			fail=1
		fi
	done
	if echo "$top" | grep -Eq ' (churn|operator new|operator delete)'; then
		echo "FAIL [$alloc]: churn or an operator new/delete frame appears:"
		echo "$top" | grep -E ' (churn|operator new|operator delete)'
		fail=1
	fi
	# default rate (512 KiB): no crash, same behaviour
	rm -f ./*.heap
	out=$(LD_PRELOAD="$pre" "$prog")
	rc=$?
	if [ "$out" != "$want_out" ] || [ $rc -ne $want_rc ]; then
		echo "FAIL [$alloc] default rate: output '$out' rc $rc, want '$want_out' rc $want_rc"
		fail=1
	fi
	echo "[$alloc] exact site bytes, same output"
done
[ $tested -ge 1 ] || { echo "no allocator tested"; exit 1; }
[ $fail -eq 0 ] && echo ok
exit $fail
