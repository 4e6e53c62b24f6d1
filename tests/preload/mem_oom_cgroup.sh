#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# mem_oom_cgroup.sh - option prof_oom in a real cgroup v1 memory group: the test creates
# /sys/fs/cgroup/memory/heaptap-test-<pid> with a 192 MiB limit, moves the program into it and
# lets it grow (tests/progs/mem_evidence.c grow) to 85 % and then 92 % of the limit, waiting
# for a dump after each, then free everything and wait three more checks of the watch. Exactly
# two 'o' dumps must exist, their reasons naming 80 % and 90 %, the cgroup and the limit, and
# the top site of each must be the grower; none after the shrink. Then the v2 code path on a
# tree the test lays out (mem_cgroup names it): memory.high below memory.max is the limit,
# 85 % and 92 % give two dumps, 30 % none, and a memory.events "max" increase one more.
# Skips (77) the v1 part only when the memory controller is not mounted or not writable.
set -u
prog="$HEAPTAP_BUILD/progs/mem_evidence"
[ -x "$prog" ] || { echo "missing $prog (make progs)"; exit 1; }
d=$(mktemp -d)
cg=""
cleanup() {
	if [ -n "$cg" ] && [ -d "$cg" ]; then
		# move anything left back to the parent, then remove the group
		while read -r p; do echo "$p" >"$(dirname "$cg")/cgroup.procs" 2>/dev/null; done <"$cg/cgroup.procs"
		rmdir "$cg" 2>/dev/null
	fi
	rm -rf "$d"
}
trap cleanup EXIT
fail=0
skipped=0

# check_dumps DIR COUNT WANT_SUBSTRINGS...: DIR holds COUNT 'o' dumps (in order), the i-th
# reason contains the i-th substring, and the top site of each is grower.
check_dumps() {
	local dir=$1 count=$2; shift 2
	local files
	files=$(ls "$dir"/h.*.o*.heap 2>/dev/null | sort -t. -k3,3n)
	local n
	n=$(echo -n "$files" | grep -c '^' || true)
	if [ "$n" -ne "$count" ]; then
		echo "FAIL: $n memory-pressure dumps in $dir, expected $count"; ls "$dir"; fail=1; return
	fi
	local i=0
	for f in $files; do
		local want=$1; shift
		local reason
		reason=$(sed -n 's/^# heaptap: reason=//p' "$f")
		grep -q '^# heaptap: trigger=oom$' "$f" || { echo "FAIL: $f: trigger is not oom"; fail=1; }
		case $reason in *"$want"*) ;; *) echo "FAIL: $f: reason '$reason' lacks '$want'"; fail=1 ;; esac
		local top
		top=$("$HEAPTAP" top "$prog" "$f" 2>/dev/null | awk 'NR == 2 { print $6 }')
		[ "$top" = grower ] || { echo "FAIL: $f: top site '$top', expected grower"; fail=1; }
		echo "ok: $(basename "$f"): $reason; top site $top"
		i=$((i + 1))
	done
}

# ---- cgroup v1 ----
root=/sys/fs/cgroup/memory
if [ -w "$root" ] && [ -f "$root/memory.limit_in_bytes" ] && mkdir "$root/heaptap-test-$$" 2>/dev/null; then
	cg=$root/heaptap-test-$$
	limit=$((192 << 20))
	echo $limit >"$cg/memory.limit_in_bytes"
	mkdir "$d/v1"
	# the subshell moves itself into the group, then becomes the program
	( echo $BASHPID >"$cg/cgroup.procs" &&
	  HEAPTAP_CONF="prof_oom:true,prof_prefix:$d/v1/h" LD_PRELOAD="$HEAPTAP_LIB" \
		exec "$prog" grow "$cg/memory.usage_in_bytes" $limit ) || { echo "FAIL: the v1 program failed"; fail=1; }
	check_dumps "$d/v1" 2 "crossed prof_oom_at 80 %" "crossed prof_oom_at 90 %"
	grep -q "of limit 192.0 MiB (.*cgroup $cg)" "$d"/v1/h.*.o0.heap || { echo "FAIL: the reason names no cgroup limit"; fail=1; }
	lim=$(sed -n 's/^# heaptap: memory.cgroup_limit=//p' "$d"/v1/h.*.o0.heap)
	[ "$lim" = "$limit" ] || { echo "FAIL: the dump's cgroup_limit $lim, expected $limit"; fail=1; }
	rmdir "$cg" && cg=""
else
	echo "cgroup v1 memory controller not available here: v1 part skipped"
	skipped=1
fi

# ---- cgroup v2 (a laid-out tree) ----
t=$d/cg2
mkdir -p "$t" "$d/v2"
echo $((1 << 30)) >"$t/memory.max"
echo $((512 << 20)) >"$t/memory.high"
echo 0 >"$t/memory.current"
printf 'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n' >"$t/memory.events"
HEAPTAP_CONF="prof_oom:true,prof_oom_cooldown:0,mem_cgroup:$t,prof_prefix:$d/v2/h" LD_PRELOAD="$HEAPTAP_LIB" \
	"$prog" fake "$t" || { echo "FAIL: the v2 program failed"; fail=1; }
check_dumps "$d/v2" 3 "crossed prof_oom_at 80 %" "crossed prof_oom_at 90 %" "memory.events max now 1"
grep -q "of limit 512.0 MiB" "$d"/v2/h.*.o0.heap || { echo "FAIL: v2: memory.high is not the limit"; fail=1; }

# heaptap report charts the memory figures of the dumps beside the heap
"$HEAPTAP" report "$prog" "$d"/v2/h.*.o*.heap -o "$d/r.html" 2>/dev/null || { echo "FAIL: report failed"; fail=1; }
grep -q 'Memory beside the heap' "$d/r.html" && grep -q 'data-name="limit"' "$d/r.html" &&
	grep -q 'data-name="heap (sampled)"' "$d/r.html" && grep -q 'limit 512.0 MiB' "$d/r.html" ||
	{ echo "FAIL: the report has no memory chart"; fail=1; }

[ $fail -eq 0 ] && [ $skipped -eq 1 ] && exit 77
exit $fail
