#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# host_bash.sh - a bash script that forks and execs (pipes, subshells, command substitution,
# background jobs) under the collector: same output and exit code; every process writes its own
# final dump named with its own pid, and every dump parses.
. "$(dirname "$0")/lib/host.sh"
script=$HOST_TMP/forky.sh
cat >"$script" <<'SH'
set -u
n=0
for i in 1 2 3 4 5; do
	n=$((n + $(echo "$i" | tr 0-9 0-9 | wc -c)))
	( x=$(seq 1 200 | sort -n | tail -1); echo "sub $i $x" )
	sleep 0.01 &
done
wait
printf '%s\n' {1..300} | sort -r | head -2
echo "n=$n"
exit 9
SH
host_compare bash bash "$script"
for tag in bash.default bash.lg_prof_sample:0; do
	d=$HOST_TMP/$tag/dumps
	nd=$(ls "$d"/heaptap.*.f.heap | wc -l)
	npid=$(ls "$d" | sed -n 's/^heaptap\.\([0-9]*\)\..*\.f\.heap$/\1/p' | sort -u | wc -l)
	echo "$tag: $nd final dumps from $npid distinct pids"
	[ "$nd" -ge 20 ] || host_fail "$tag: expected a final dump from each of the >= 20 processes, got $nd"
	[ "$nd" = "$npid" ] || host_fail "$tag: $nd final dumps but $npid pids: a process wrote another's dump"
	for f in "$d"/heaptap.*.f.heap; do
		pid=$(basename "$f" | cut -d. -f2)
		grep -q "^# heaptap: pid=$pid\$" "$f" || host_fail "$tag: $f does not say pid=$pid inside"
	done
	host_check_parse "$tag"
done
echo "bash ok"
