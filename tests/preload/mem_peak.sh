#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# mem_peak.sh - option prof_peak: site_a keeps 200 MiB and frees it before exit, site_b keeps
# 40 MiB to the end (tests/progs/mem_evidence.c peak). The peak profile written at exit
# (kind 'p') shows site_a at ~200 MiB (the copy is taken within 10 % of the peak, so >= 170
# MiB), and the final dump shows site_b at ~40 MiB and no site_a. A mean sample interval of
# 64 KiB samples every 1 MiB block (probability 1 - e^-16) so the figures carry no sampling
# noise: at the default 512 KiB, 40 blocks read 40 +- 2.5 MiB and the test failed ~2 % of runs.
# Without the option there is no 'p' file. `heaptap run` prints the "heap at its peak" table
# with site_a first.
set -u
prog="$HEAPTAP_BUILD/progs/mem_evidence"
[ -x "$prog" ] || { echo "missing $prog (make progs)"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0
MiB=$((1 << 20))

# mib_of FILE FUNCTION: the function's flat bytes in `heaptap top --show_bytes`, in MiB (0 if absent)
mib_of() {
	"$HEAPTAP" top --show_bytes "$prog" "$1" 2>/dev/null |
		awk -v f="$2" '$6 == f { printf "%d", $1 / 1048576; found = 1 } END { if (!found) print 0 }'
}

HEAPTAP_CONF="prof_peak:true,lg_prof_sample:16,prof_prefix:$d/h" LD_PRELOAD="$HEAPTAP_LIB" "$prog" peak || { echo "program failed"; exit 1; }
p=$(ls "$d"/h.*.p.heap 2>/dev/null)
f=$(ls "$d"/h.*.f.heap 2>/dev/null)
[ -n "$p" ] && [ -n "$f" ] || { ls "$d"; echo "missing the peak or the final dump"; exit 1; }
grep -q '^# heaptap: trigger=peak$' "$p" || { echo "peak dump: trigger is not peak"; fail=1; }
a=$(mib_of "$p" site_a); b=$(mib_of "$f" site_b); a_final=$(mib_of "$f" site_a)
echo "peak: site_a $a MiB; final: site_b $b MiB, site_a $a_final MiB"
[ "$a" -ge 170 ] && [ "$a" -le 230 ] || { echo "FAIL: site_a in the peak profile: $a MiB, expected ~200"; fail=1; }
[ "$b" -ge 34 ] && [ "$b" -le 46 ] || { echo "FAIL: site_b in the final dump: $b MiB, expected ~40"; fail=1; }
[ "$a_final" -eq 0 ] || { echo "FAIL: site_a in the final dump: $a_final MiB"; fail=1; }
peak_live=$(sed -n 's/^# heaptap: memory.heap_live_estimate=//p' "$p")
[ "${peak_live:-0}" -ge $((170 * MiB)) ] || { echo "FAIL: the peak dump's heap_live_estimate $peak_live"; fail=1; }

# no option, no peak file
mkdir "$d/off"
HEAPTAP_CONF="prof_prefix:$d/off/h" LD_PRELOAD="$HEAPTAP_LIB" "$prog" peak || { echo "program failed"; fail=1; }
ls "$d"/off/h.*.p.* >/dev/null 2>&1 && { echo "FAIL: a peak profile without prof_peak"; fail=1; }

# heaptap run shows the heap at its peak, site_a first
out=$("$HEAPTAP" run --out "$d/run" -- "$prog" peak 2>&1)
if ! grep -q '^heaptap: heap at its peak: ' <<<"$out"; then
	echo "$out"; echo "FAIL: run printed no peak table"; fail=1
else
	first=$(sed -n '/^heaptap: heap at its peak/,$p' <<<"$out" | awk '/[0-9]%/ && NF >= 5 { print $5; exit }')
	[ "$first" = site_a ] || { echo "$out"; echo "FAIL: the peak table's first site is '$first'"; fail=1; }
	grep -q '^heaptap: memory of ' <<<"$out" || { echo "FAIL: run printed no memory line"; fail=1; }
	echo "run: $(grep '^heaptap: heap at its peak' <<<"$out")"
fi
exit $fail
