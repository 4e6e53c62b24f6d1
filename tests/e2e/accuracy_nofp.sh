#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# accuracy_nofp.sh - a program built WITHOUT frame pointers (-O2 -fomit-frame-pointer, compiled
# here) still has its memory attributed to the right functions with the default unwinder
# (DWARF: heaptap's CFI walk; prof_unwind:libunwind, its old alias, too): at lg_prof_sample:0
# jeprof must give each leaf its bytes (flat) and each caller in
# the chains outer_* -> middle_* -> leaf_* the same bytes (cum), within 0.5%.
set -u
. "$(dirname "$0")/lib/common.sh"
ht_init
command -v jeprof >/dev/null || ht_skip "jeprof is not installed"
command -v cc >/dev/null || ht_skip "no C compiler (cc)"
bin=$TMP/nofp_sites
cc -std=gnu11 -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -o "$bin" \
	"$ROOT/tests/e2e/lib/nofp_sites.c" || ht_fail "cannot compile nofp_sites.c"
bin=$(readlink -f "$bin")
# The build really has no frame pointers: none of the program's own functions sets %rbp up.
for fn in leaf_alpha leaf_beta middle_alpha middle_beta outer_alpha outer_beta main; do
	objdump -d --disassemble="$fn" "$bin" >"$TMP/fn.s"
	grep -q "<$fn>:" "$TMP/fn.s" || ht_fail "$fn is not a function of its own in nofp_sites"
	grep -q 'mov *%rsp,%rbp' "$TMP/fn.s" && ht_fail "$fn in nofp_sites was built with a frame pointer"
done
rc=0
# heaptap's own CFI walk (the default), and under the name libunwind (an alias since libunwind
# was dropped: a migrated configuration must keep its accuracy)
for unw in dwarf libunwind; do
	d=$TMP/run.$unw
	ht_run "$d" lg_prof_sample:0,prof_unwind:$unw "$bin" "$d/truth.txt" || ht_fail "nofp_sites exited with $?"
	dump=$(ht_final "$d") || exit 1
	ht_jeprof "$bin" "$dump" "$d/report" || ht_fail "jeprof failed on $dump"
	echo "== nofp_sites ($PROFILER, prof_unwind:$unw)"
	$ACC_PY exact --kind jeprof --mode "$(ht_mode)" "$d/truth.txt" "$d/report" || rc=1
done
exit $rc
