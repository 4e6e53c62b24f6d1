#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# stress_proctree.sh - fork without exec, vfork+exec, posix_spawn and a fork+exec chain under
# the collector: every process exits as unprofiled, writes its own final dump named with its
# own pid (and saying that pid inside), and each dump holds that process's own memory: the
# parent's site in the parent's dump, the child's site in the children's.
. "$(dirname "$0")/../e2e/lib/host.sh"
prog=$ROOT/build/progs/stress_proctree
[ -x "$prog" ] || host_fail "$prog not built (make progs)"
host_run plain - "$prog"
host_run tree "lg_prof_sample:0" "$prog"
[ "$(cat "$HOST_TMP/tree/rc")" = 0 ] || { cat "$HOST_TMP/tree/err"; host_fail "exit $(cat "$HOST_TMP/tree/rc")"; }
roles() { sed 's/^pid [0-9]* //' "$1" | sort; }
[ "$(roles "$HOST_TMP/plain/out")" = "$(roles "$HOST_TMP/tree/out")" ] || host_fail "processes printed different roles under the collector"
d=$HOST_TMP/tree/dumps
while read -r _ pid _ role _; do
	f=$(ls "$d"/heaptap."$pid".*.f.heap 2>/dev/null)
	[ -n "$f" ] || host_fail "no final dump for $role process $pid"
	grep -q "^# heaptap: pid=$pid\$" "$f" || host_fail "$f does not say pid=$pid"
	"$HEAPTAP" top --show_bytes "$prog" "$f" >"$HOST_TMP/top" || host_fail "$f does not parse"
	# parent: its own site only; forked child: its own site plus the parent's objects it
	# inherited (they are live in its copy); chain processes (fresh images): their own site.
	case $role in
	parent) expect="tree_parent_site=$((16 * 262144)) tree_child_site=" ;;
	forked) expect="tree_parent_site=$((16 * 262144)) tree_child_site=$((24 * 262144))" ;;
	*) expect="tree_parent_site= tree_child_site=$((24 * 262144))" ;;
	esac
	for e in $expect; do
		site=${e%%=*} want=${e#*=}
		got=$(awk -v s="$site" '$6 == s { print $1 }' "$HOST_TMP/top")
		echo "$role (pid $pid): $site ${got:-none} bytes, want ${want:-none}"
		[ "$got" = "$want" ] || { head "$HOST_TMP/top"; host_fail "$role: $site holds ${got:-none}, want ${want:-none}"; }
	done
done <"$HOST_TMP/tree/out"
n=$(ls "$d"/*.f.heap | wc -l)
echo "$n final dumps (parent, forked child, /bin/true, three chain processes)"
[ "$n" -ge 6 ] || host_fail "expected >= 6 final dumps, got $n"
echo "proctree ok"
