#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# collector_early_late.sh - allocations before the collector initialises (a preloaded library's
# constructor that runs before libheaptap's) and after its final dump (atexit handlers, one of
# them registered during exit, and a destructor): the program runs to a normal exit, every
# late handler finishes, the final dump parses, and at lg_prof_sample:0 it shows the early
# library's 2 MiB (early_keep) and main's 1 MiB (main_keep) exactly.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
command -v jeprof >/dev/null || ht_skip "jeprof is not installed"
ht_need_prog coll_late
cc -shared -fPIC -O1 -g -fno-omit-frame-pointer -o "$TMP/libearly.so" "$ROOT/tests/e2e/lib/early_ctor.c" ||
	ht_fail "cannot build libearly.so"
d=$TMP/run
mkdir -p "$d"
if [ "$PROFILER" = jemalloc ]; then
	pre="$JEMALLOC_SO $TMP/libearly.so"
	env_conf=(MALLOC_CONF="prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:$d/ht")
else
	pre="$HEAPTAP_LIB $TMP/libearly.so"
	env_conf=(HEAPTAP_CONF="lg_prof_sample:0,prof_prefix:$d/ht")
fi
(cd "$d" && env LD_PRELOAD="$pre" "${env_conf[@]}" "$BIN") >"$d/out" 2>&1
rc=$?
cat "$d/out"
[ $rc = 0 ] || ht_fail "coll_late exited with $rc"
for s in "early_ctor: allocated before main" "late: atexit ok" "late: nested atexit ok" "late: destructor ok"; do
	grep -q "$s" "$d/out" || ht_fail "missing '$s': a handler did not finish"
done
dump=$(ht_final "$d") || exit 1
grep -q '^MAPPED_LIBRARIES:' "$dump" || ht_fail "$dump has no memory map section"
ht_jeprof "$BIN" "$dump" "$d/report" || ht_fail "jeprof cannot read $dump"
cat >"$d/truth.txt" <<EOT
site early_keep req=2097152 usable=2097152 col=flat objs=2x1048576
site main_keep req=1048576 usable=1048576 col=flat objs=1x1048576
EOT
$ACC_PY exact --kind jeprof --mode "$(ht_mode)" "$d/truth.txt" "$d/report"
