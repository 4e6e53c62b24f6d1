#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# stress_threads.sh - 64 threads with cross-thread frees, realloc chains, exits while sampled
# objects live on, a 1 kHz SIGALRM inside malloc and allocating TSD destructors, under the
# collector at lg_prof_sample:0 (the kept bytes must be EXACT in stress_keep) and at the default
# rate; then the same with 40 SIGUSR2 dump requests (prof_signal:USR2) fired during the run.
. "$(dirname "$0")/../e2e/lib/host.sh"
prog=$ROOT/build/progs/stress_threads
[ -x "$prog" ] || host_fail "$prog not built (make progs)"
host_compare stress "$prog"
truth=$(sed -n 's/^kept [0-9]* objects, \([0-9]*\) bytes$/\1/p' "$HOST_TMP/stress.plain/out")
"$HEAPTAP" top --show_bytes "$prog" "$(host_dumps stress.lg_prof_sample:0)" >"$HOST_TMP/top0" || host_fail "top failed"
got=$(awk '$6 == "stress_keep" { print $1 }' "$HOST_TMP/top0")
echo "lg_prof_sample:0: stress_keep truth $truth bytes, dump says ${got:-nothing}"
[ "$got" = "$truth" ] || { head "$HOST_TMP/top0"; host_fail "stress_keep: $got != $truth"; }
host_check_parse stress.default
host_top_has stress.default "$(host_dumps stress.default)" "$prog" stress_keep 50

# prof_signal bombardment during heavy malloc.
host_run usr2 "prof_signal:USR2" "$prog" --usr2 40
[ "$(cat "$HOST_TMP/usr2/rc")" = 0 ] || { tail "$HOST_TMP/usr2/err"; host_fail "exit $(cat "$HOST_TMP/usr2/rc") with SIGUSR2 dump requests"; }
cmp -s "$HOST_TMP/usr2/out" "$HOST_TMP/stress.plain/out" || host_fail "output differs with SIGUSR2 dump requests"
ns=$(ls "$HOST_TMP/usr2/dumps/" | grep -c '\.s[0-9]*\.heap$')
echo "SIGUSR2 x40: $ns signal dumps written (requests arriving during a dump coalesce)"
[ "$ns" -ge 1 ] || host_fail "no signal dump written"
host_check_parse usr2
echo "stress ok"
