#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# collector_phases.sh - dumps taken at different moments show what is live at that moment: at
# lg_prof_sample:0, the first manual dump has phase_a's 8 MiB and nothing of phase_b; after
# phase_a's memory is freed and phase_b allocates, the second manual dump and the final dump
# have phase_b's 5 MiB + 112000 B and phase_a ~0 (frees of sampled objects are accounted).
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
command -v jeprof >/dev/null || ht_skip "jeprof is not installed"
ht_need_prog coll_triggers
d=$TMP/run
ht_run "$d" lg_prof_sample:0 "$BIN" phases >"$TMP/out" || ht_fail "coll_triggers phases exited with $? ($(cat "$TMP/out"))"
ls "$d"
m0=$(ls "$d"/ht.*.m0.heap 2>/dev/null) || ht_fail "no first manual dump (m0)"
m1=$(ls "$d"/ht.*.m1.heap 2>/dev/null) || ht_fail "no second manual dump (m1)"
fin=$(ht_final "$d") || exit 1
cat >"$TMP/t0" <<EOT
site phase_a req=8388608 usable=8388608 col=flat objs=8x1048576
site phase_b req=0 usable=0 col=flat objs=0x0
EOT
cat >"$TMP/t1" <<EOT
site phase_a req=0 usable=0 col=flat objs=0x0
site phase_b req=5354880 usable=5354880 col=flat objs=5x1048576+1000x112
EOT
rc=0
for pair in "$m0:$TMP/t0:first manual dump" "$m1:$TMP/t1:second manual dump" "$fin:$TMP/t1:final dump"; do
	IFS=: read -r dump truth what <<<"$pair"
	ht_jeprof "$BIN" "$dump" "$TMP/report" || ht_fail "jeprof cannot read $dump"
	echo "== $what: $(basename "$dump")"
	$ACC_PY exact --kind jeprof --mode "$(ht_mode)" "$truth" "$TMP/report" || rc=1
done
exit $rc
