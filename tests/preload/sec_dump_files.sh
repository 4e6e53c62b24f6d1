#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sec_dump_files.sh - dump files cannot be turned against the host (issue 14, item 2): a
# symlink planted at the name the temporary had before (<dump>.tmp.<pid>) and one planted at
# the final name leave their target untouched; dumps are regular files of mode 0600 whatever
# the umask (prof_dump_mode widens it); temporaries that a killed process left behind are
# deleted by the next dump in that directory, those of a live process and other files kept.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
LEAKY=$HEAPTAP_BUILD/examples/leaky; [ -x "$LEAKY" ] || ht_skip "build/examples/leaky is not built"
D=$TMP/dumps
mkdir -p "$D"
echo "precious" > "$TMP/victim"
echo "precious2" > "$TMP/victim2"

# a process that died: its pid, once it is gone
sleep 0 & dead=$!
wait $dead
stale_new="$D/ht.$dead.3.m1.heap.tmp.$dead.0123456789abcdef"
stale_old="$D/ht.$dead.0.f.heap.tmp.$dead"
live="$D/ht.$$.0.f.heap.tmp.$$.fedcba9876543210"
other="$D/notes.tmp.$dead"
for f in "$stale_new" "$stale_old" "$live" "$other"; do echo x > "$f"; done

# exec keeps the shell's pid, so the final dump's names are known in advance
( umask 000
  sh -c 'ln -s "$1" "$2/ht.$$.0.f.heap.tmp.$$"; ln -s "$3" "$2/ht.$$.0.f.heap"; echo $$ > "$2/pid";
         exec env LD_PRELOAD="$4" HEAPTAP_CONF="prof_prefix:$2/ht,lg_prof_sample:12" "$5" >/dev/null' \
	sh "$TMP/victim" "$D" "$TMP/victim2" "$HEAPTAP_LIB" "$LEAKY" ) ||
	ht_fail "the profiled program failed"
pid=$(cat "$D/pid")
[ "$(cat "$TMP/victim")" = precious ] || ht_fail "the dump followed the symlink planted at its temporary name"
[ "$(cat "$TMP/victim2")" = precious2 ] || ht_fail "the dump followed the symlink planted at its final name"
f="$D/ht.$pid.0.f.heap"
[ -f "$f" ] && [ ! -L "$f" ] || ht_fail "no regular final dump $f"
grep -q "^heap_v2/" "$f" || ht_fail "the final dump is not heap_v2"
mode=$(stat -c %a "$f")
[ "$mode" = 600 ] || ht_fail "dump mode $mode under umask 000, want 600"
[ -z "$(find "$D" -type f -name "ht.$pid.*.tmp.*")" ] || ht_fail "a temporary of this run was left: $(ls "$D")"
[ ! -e "$stale_new" ] && [ ! -e "$stale_old" ] || ht_fail "stale temporaries of dead pid $dead were kept: $(ls "$D")"
[ -e "$live" ] || ht_fail "the temporary of a live process was deleted"
[ -e "$other" ] || ht_fail "a file not named like our dumps was deleted"

# prof_dump_mode widens it
D2=$TMP/d2
ht_run "$D2" "prof_dump_mode:0640" "$LEAKY" >/dev/null || ht_fail "run 2 failed"
f2=$(ht_final "$D2") || exit 1
mode=$(stat -c %a "$f2")
[ "$mode" = 640 ] || ht_fail "prof_dump_mode:0640 gave mode $mode"
echo "ok: symlinks at the temporary and final names left alone, mode 600/640, stale temporaries of pid $dead cleaned"
