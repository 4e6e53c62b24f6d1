#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# dropin_mallctl.sh - jemalloc's control API under heaptap (issue 15, item 4): build/progs/
# jeapi_prog, written against jemalloc's API with mallctl declared weak, runs on glibc with
# LD_PRELOAD=libheaptap.so and its calls work: opt.prof / config.prof true, prof.reset(0) then
# prof.lg_sample 0, prof.active off hides hidden_site's 8 MiB, prof.dump to a named file holds
# site_one's 24 MiB exactly (stock jeprof puts site_one on top), thread.prof.active off hides
# thread_off_site's 16 MiB, prof.dump with NULL writes <prof_prefix>.<pid>.<seq>.m0.heap with
# site_two's 12 MiB on top, stats.allocated is 12 MiB, unknown names (arenas.narenas,
# thread.allocatedp) are ENOENT, a wrong length EINVAL, writing a read-only name EPERM. The weak
# mallocx, sdallocx and malloc_stats_print stay NULL. Mesos's start / dump / stop sequence
# writes a dump with its site on top. With a real jemalloc in the process heaptap never shadows
# it: preloaded after heaptap (heaptap's mallctl forwards to it) and linked statically with an
# exported mallctl, the program's calls reach jemalloc (its version string, arenas.narenas).
. "$(dirname "$0")/lib/test.sh"
LIB=${HEAPTAP_LIB:-$ROOT/build/libheaptap.so}
BIN=$ROOT/build/progs/jeapi_prog
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
command -v jeprof >/dev/null || { echo "skip: jeprof is not installed"; exit 77; }
[ -x "$BIN" ] || { echo "FAIL: $BIN is not built (make progs)"; exit 1; }
BIN=$(readlink -f "$BIN")
cp "$LIB" "$TMP/libheaptap.so" && LIB=$TMP/libheaptap.so
top1() { jeprof --text --show_bytes "$BIN" "$1" 2>/dev/null | awk 'NR == 2 { print $1, $6 }'; }

# the recipe on glibc
mkdir "$TMP/r"
(cd "$TMP/r" && env -u MALLOC_CONF HEAPTAP_CONF="prof_prefix:$TMP/r/ht" LD_PRELOAD="$LIB" "$BIN" recipe "$TMP/r") \
	>"$TMP/r.out" 2>"$TMP/r.err"
want="opt.prof rc=0 1 config.prof rc=0 1
opt.lg_prof_sample rc=0 19
prof.reset rc=0 prof.lg_sample rc=0 0
prof.active=false rc=0 old=1
prof.active=true rc=0 old=0 now=1
prof.dump one rc=0
thread.prof.active=false rc=0 old=1
thread.prof.active=true rc=0 old=0
prof.dump NULL rc=0
epoch rc=0 stats.allocated rc=0 MiB=12
arenas.narenas rc=2
thread.allocatedp rc=2
opt.lg_prof_sample len=1 rc=22
opt.prof write rc=1
prof.dump read rc=1"
check "recipe: what each mallctl returned" "$want" "$(cat "$TMP/r.out")"
check "prof.dump to a name: site_one's 24 MiB on top" "25165824 site_one" "$(top1 "$TMP/r/one.heap")"
auto=$(ls "$TMP/r" | grep -E '^ht\.[0-9]+\.[0-9]+\.m0\.heap$')
check "prof.dump NULL: one file under prof_prefix" "1" "$(echo "$auto" | grep -c .)"
[ -n "$auto" ] && check "prof.dump NULL: site_two's 12 MiB on top" "12582912 site_two" "$(top1 "$TMP/r/$auto")"
for f in "$TMP/r/one.heap" "$TMP/r/$auto"; do
	jeprof --text --show_bytes "$BIN" "$f" 2>/dev/null | grep -Eq 'hidden_site|thread_off_site' &&
		{ echo "FAIL: sampled while prof.active or thread.prof.active was off ($f)"; fail=1; }
done

# the probes programs use to tell jemalloc is the allocator stay false
check "weak symbols under heaptap" "weak mallctl=1 mallocx=0 sdallocx=0 malloc_stats_print=0" \
	"$(env -u MALLOC_CONF LD_PRELOAD="$LIB" "$BIN" probe 2>/dev/null | head -n 1)"

# Mesos: MALLOC_CONF=prof:true,prof_active:false as its documentation says, then start/dump/stop
(cd "$TMP" && HEAPTAP_CONF=prof_prefix: MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:0 \
	LD_PRELOAD="$LIB" "$BIN" mesos "$TMP/mesos.heap") >"$TMP/m.out" 2>"$TMP/m.err"
check "mesos sequence" "mesos start rc=0 previous=0
mesos dump rc=0
mesos stop rc=0 previous=1" "$(cat "$TMP/m.out")"
check "mesos dump: site_one's 10 MiB on top" "10485760 site_one" "$(top1 "$TMP/mesos.heap")"

# a real jemalloc after heaptap in the search order: heaptap's mallctl forwards to it
if [ -f "$JE" ]; then
	env -u MALLOC_CONF LD_PRELOAD="$LIB:$JE" "$BIN" probe >"$TMP/p.out" 2>/dev/null
	grep -q '^version rc=0 [0-9]' "$TMP/p.out" && grep -qx 'arenas.narenas rc=0' "$TMP/p.out" &&
		echo "ok[libjemalloc.so after heaptap answers]" ||
		{ echo "FAIL: jemalloc preloaded after heaptap is shadowed:"; cat "$TMP/p.out"; fail=1; }
fi
# a program linked with a static jemalloc that exports mallctl resolves to its own
if [ -f /usr/lib/x86_64-linux-gnu/libjemalloc.a ] && command -v cc >/dev/null; then
	cc -std=gnu11 -O1 -g -rdynamic -o "$TMP/jstatic" "$ROOT/tests/progs/jeapi_prog.c" \
		-Wl,-Bstatic -ljemalloc -Wl,-Bdynamic -lpthread -ldl -lm || { echo "FAIL: cannot link the static jemalloc"; fail=1; }
	env -u MALLOC_CONF LD_PRELOAD="$LIB" "$TMP/jstatic" probe >"$TMP/s.out" 2>/dev/null
	grep -q '^version rc=0 [0-9]' "$TMP/s.out" && grep -qx 'arenas.narenas rc=0' "$TMP/s.out" &&
		echo "ok[a static jemalloc keeps its own mallctl]" ||
		{ echo "FAIL: the static jemalloc's mallctl is shadowed:"; cat "$TMP/s.out"; fail=1; }
fi
exit $fail
