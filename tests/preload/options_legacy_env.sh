#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# options_legacy_env.sh - the environments of the tools heaptap replaces configure it (issue 15,
# item 3): gperftools' HEAPPROFILE (dumps named after it, not heaptap.<pid> in the working
# directory), HEAP_PROFILE_ALLOCATION_INTERVAL (interval dumps), HEAPPROFILESIGNAL (signal
# dumps), HEAP_PROFILE_TIME_INTERVAL and HEAP_PROFILE_INUSE_INTERVAL (translated, shown on the
# line), jemalloc's MALLOC_CONF keys heaptap shares (an unknown jemalloc key is dropped without
# a complaint), HEAPTAP_CONF winning over both, one stderr line naming the variables, and
# MALLOC_CONF left to a jemalloc in the process.
set -u
BIN=$HEAPTAP_BUILD/progs/coll_triggers
[ -x "$BIN" ] || { echo "missing $BIN (make progs)"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }
run() { # DIR ENV... -- ARGS: runs coll_triggers in DIR with only the given variables
	local dir=$1; shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	mkdir -p "$dir"
	(cd "$dir" && env -u HEAPTAP_CONF -u MALLOC_CONF -u HEAPPROFILE "${envs[@]}" LD_PRELOAD="$HEAPTAP_LIB" "$BIN" "$@") \
		>"$dir.out" 2>"$dir.err"
}

# HEAPPROFILE + allocation interval + signal + time + inuse
mkdir -p "$d/out"
run "$d/gp" HEAPPROFILE="$d/out/gluten_heap_perf_c1" HEAP_PROFILE_ALLOCATION_INTERVAL=1048576 HEAPPROFILESIGNAL=12 \
	HEAP_PROFILE_TIME_INTERVAL=3600 HEAP_PROFILE_INUSE_INTERVAL=104857600 -- churn 8
want="heaptap: options from HEAPPROFILE (prof_prefix:$d/out/gluten_heap_perf_c1,lg_prof_interval:20,prof_gdump:true,prof_time_interval:3600s,prof_signal:12)"
[ "$(grep -c '^heaptap:' "$d/gp.err")" = 1 ] && grep -qxF "$want" "$d/gp.err" && ok "one line: $want" ||
	fail "HEAPPROFILE line: $(cat "$d/gp.err")"
n=$(ls "$d/out" | grep -c '^gluten_heap_perf_c1\.[0-9]*\.[0-9]*\.i[0-9]*\.heap$')
[ "$n" -ge 4 ] && ls "$d/out" | grep -q '^gluten_heap_perf_c1\.[0-9]*\.[0-9]*\.f\.heap$' && [ -z "$(ls "$d/gp")" ] &&
	ok "HEAPPROFILE: $n interval dumps (1 MiB) and a final one under the prefix, none in the working directory" ||
	fail "HEAPPROFILE files: $(ls "$d/out" "$d/gp")"
run "$d/sig" HEAPPROFILE="$d/out/sig" HEAPPROFILESIGNAL=12 -- signal
ls "$d/out" | grep -q '^sig\.[0-9]*\.[0-9]*\.s0\.heap$' &&
	ok "HEAPPROFILESIGNAL=12: a signal dump" || fail "HEAPPROFILESIGNAL: $(cat "$d/sig.out" "$d/sig.err")"
# HEAPPROFILE alone: gperftools' default allocation interval, 1 GiB
run "$d/def" HEAPPROFILE="$d/out/def" -- churn 1
grep -qF "(prof_prefix:$d/out/def,lg_prof_interval:30)" "$d/def.err" && ok "HEAPPROFILE alone: lg_prof_interval:30 (1 GiB)" ||
	fail "HEAPPROFILE alone: $(cat "$d/def.err")"

# MALLOC_CONF: shared keys only, no complaint about narenas
run "$d/mc" MALLOC_CONF="prof:true,narenas:4,lg_prof_interval:20,prof_prefix:$d/out/mc" -- churn 4
grep -qxF "heaptap: options from MALLOC_CONF (prof:true,lg_prof_interval:20,prof_prefix:$d/out/mc)" "$d/mc.err" &&
	[ "$(grep -c '^heaptap:' "$d/mc.err")" = 1 ] && ls "$d/out" | grep -q '^mc\.[0-9]*\.[0-9]*\.i0\.heap$' &&
	ok "MALLOC_CONF: shared keys applied (interval dumps under its prof_prefix), narenas dropped silently" ||
	fail "MALLOC_CONF: $(cat "$d/mc.err"; ls "$d/out")"

# HEAPTAP_CONF wins over both
run "$d/win" MALLOC_CONF="prof_prefix:$d/out/mcw" HEAPPROFILE="$d/out/hpw" HEAPTAP_CONF="prof_prefix:$d/out/htw" -- churn 1
grep -qxF "heaptap: options from MALLOC_CONF and HEAPPROFILE (prof_prefix:$d/out/mcw,prof_prefix:$d/out/hpw,lg_prof_interval:30), then HEAPTAP_CONF, which wins" "$d/win.err" &&
	ls "$d/out" | grep -q '^htw\.' && ! ls "$d/out" | grep -q -e '^mcw\.' -e '^hpw\.' &&
	ok "HEAPTAP_CONF wins over HEAPPROFILE, which wins over MALLOC_CONF" || fail "precedence: $(cat "$d/win.err"; ls "$d/out")"

# a jemalloc in the process reads MALLOC_CONF itself
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
if [ -f "$JE" ]; then
	mkdir -p "$d/je"
	(cd "$d/je" && env -u HEAPTAP_CONF MALLOC_CONF="prof_prefix:$d/out/je" LD_PRELOAD="$HEAPTAP_LIB:$JE" "$BIN" churn 1) >"$d/je.out" 2>"$d/je.err"
	! grep -q "options from" "$d/je.err" && ok "with libjemalloc loaded, MALLOC_CONF is jemalloc's" || fail "jemalloc: $(cat "$d/je.err")"
fi
echo "$fails failures"
[ $fails = 0 ]
