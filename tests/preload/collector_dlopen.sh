#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# collector_dlopen.sh - a library loaded with dlopen allocates memory that stays live and is
# unloaded with dlclose before exit: the final dump keeps the library in its memory map (so
# jeprof symbolizes its frames) and jeprof shows dl_plugin_keep with exactly its bytes at
# lg_prof_sample:0. (jemalloc's own profiler fails this: its map lists only what is mapped now.)
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
command -v jeprof >/dev/null || ht_skip "jeprof is not installed"
ht_need_prog coll_dlopen
cc -shared -fPIC -O1 -g -fno-omit-frame-pointer -o "$TMP/libplugin.so" "$ROOT/tests/e2e/lib/dl_plugin.c" ||
	ht_fail "cannot build the plugin"
d=$TMP/run
ht_run "$d" lg_prof_sample:0 "$BIN" "$TMP/libplugin.so" "$d/truth.txt" || ht_fail "coll_dlopen exited with $?"
dump=$(ht_final "$d") || exit 1
echo "== maps lines naming the unloaded plugin:"
sed -n '/^MAPPED_LIBRARIES:/,$p' "$dump" | grep libplugin.so || ht_fail "the final dump's map lacks libplugin.so"
sed -n '/^MAPPED_LIBRARIES:/,$p' "$dump" | grep libplugin.so | grep -q ' r-xp \| r-x' ||
	ht_fail "no executable mapping of libplugin.so in the final dump"
ht_jeprof "$BIN" "$dump" "$d/report" || ht_fail "jeprof cannot read $dump"
sed 's/usable=0/usable=5242920/' "$d/truth.txt" >"$d/truth2.txt"
$ACC_PY exact --kind jeprof --mode req "$d/truth2.txt" "$d/report"
