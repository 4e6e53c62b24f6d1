#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_diff.sh - `heaptap diff --base OLD NEW` on two profiles with known numbers: the totals
# line, rows sorted by the size of the change with exact old/new/delta/delta% values,
# unchanged names left out, --nodecount, --inuse_objects; and `--text` equal to
# `jeprof --text --base` (signed values, jeprof's percentages).
. "$(dirname "$0")/lib/test.sh"
. "$(dirname "$0")/lib/cli_synth.sh"
cli_synth "$TMP"

out=$("$HEAPTAP" diff --show_bytes --base "$TMP/cli_old.raw" "$TMP/cli_new.raw") || { echo "FAIL: diff exited $?"; exit 1; }
check bytes "Total: 1054576 B -> 1053624 B (-952 B, -0.1%)
        old         new       delta   delta%  name (B)
       5000           0       -5000  -100.0%  gone
          0        2048       +2048      new  new_site
       1000        3000       +2000  +200.0%  leak" "$out"

# Without --show_bytes, sizes are in B/KiB/MiB.
out=$("$HEAPTAP" diff --base "$TMP/cli_old.raw" "$TMP/cli_new.raw")
check human "Total: 1.0 MiB -> 1.0 MiB (-952 B, -0.1%)
        old         new       delta   delta%  name
    4.9 KiB         0 B    -4.9 KiB  -100.0%  gone
        0 B     2.0 KiB    +2.0 KiB      new  new_site
     1000 B     2.9 KiB    +2.0 KiB  +200.0%  leak" "$out"

out=$("$HEAPTAP" diff --inuse_objects --nodecount=2 --base="$TMP/cli_old.raw" "$TMP/cli_new.raw")
check objects "Total: 16 objects -> 33 objects (+17 objects, +106.2%)
        old         new       delta   delta%  name (objects)
         10          30         +20  +200.0%  leak
          5           0          -5  -100.0%  gone" "$out"

# --cum compares cumulative values: main's cum changes by the total delta, handler's by leak's.
out=$("$HEAPTAP" diff --cum --show_bytes --base "$TMP/cli_old.raw" "$TMP/cli_new.raw" | grep -E ' (main|handler)$')
check cum "       1000        3000       +2000  +200.0%  handler
    1054576     1053624        -952    -0.1%  main" "$out"

if command -v jeprof >/dev/null; then
	j=$(jeprof --text --show_bytes --base "$TMP/cli_old.raw" "$TMP/cli_new.raw" 2>/dev/null)
	h=$("$HEAPTAP" diff --text --show_bytes --base "$TMP/cli_old.raw" "$TMP/cli_new.raw")
	check text-vs-jeprof "$j" "$h"
	case $h in *"-5000 525.2% 100.0%    -5000 525.2% gone"*) ;; *) echo "FAIL: no signed row for gone"; fail=1 ;; esac
else
	echo "note: jeprof not installed; --text comparison not run"
fi

"$HEAPTAP" diff "$TMP/cli_new.raw" 2>"$TMP/err" >/dev/null
rc=$?
[ $rc = 2 ] && grep -q -- '--base' "$TMP/err" || { echo "FAIL: diff without --base: exit $rc, $(cat "$TMP/err")"; fail=1; }
exit $fail
