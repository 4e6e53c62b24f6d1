#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sec_secure_exec.sh - under secure execution (AT_SECURE: setuid, setgid or file capabilities)
# the collector ignores the caller's environment (issue 14, item 3): a program linked with
# libheaptap.a and given a file capability writes no dump where HEAPTAP_CONF says, serves no
# HTTP, and reports secure_execution in its statistics, while the same binary without the
# capability obeys HEAPTAP_CONF (the control).
set -u
command -v setcap >/dev/null || { echo "setcap not installed (libcap2-bin)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "needs root to set a file capability"; exit 77; }
command -v setpriv >/dev/null || { echo "setpriv not installed"; exit 77; }
a="$HEAPTAP_BUILD/libheaptap.a"
[ -f "$a" ] || { echo "no $a"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cat >"$d/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heaptap.h"
__attribute__((noinline)) void *keep(size_t n) { return malloc(n); }
int main(void)
{
	static char stats[1 << 16];
	for (int i = 0; i < 300; i++)
		keep(777);
	heaptap_stats_json(stats, sizeof stats);
	printf("dump=%d secure=%d http=%s\n", heaptap_dump(NULL),
	       strstr(stats, "\"secure_execution\":true") != NULL,
	       strstr(stats, "\"http\":\"\"") ? "none" : "set");
	return 0;
}
C
cc -O1 -g -I"$ROOT/include" -o "$d/plain" "$d/prog.c" "$a" -lm -ldl -pthread || exit 1
cp "$d/plain" "$d/capped"
chmod 1777 "$d"
# as an unprivileged user: for root a file capability elevates nothing, so no AT_SECURE
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
setcap cap_net_bind_service+ep "$d/capped" || { echo "setcap failed here (no xattrs on $d?)"; exit 77; }
conf="prof_prefix:$d/evil,lg_prof_sample:0,http:127.0.0.1:0"
out=$(cd "$d" && HEAPTAP_CONF=$conf as_nobody ./plain) || { echo "FAIL: plain run failed"; exit 1; }
echo "plain:  $out"
[ "$out" = "dump=0 secure=0 http=set" ] || { echo "FAIL: the control did not obey HEAPTAP_CONF"; exit 1; }
ls "$d"/evil.* >/dev/null 2>&1 || { echo "FAIL: the control wrote no dump"; exit 1; }
rm -f "$d"/evil.*
out=$(cd "$d" && HEAPTAP_CONF=$conf as_nobody ./capped) || { echo "FAIL: capped run failed"; exit 1; }
echo "capped: $out"
[ "$out" = "dump=-2 secure=1 http=none" ] || { echo "FAIL: under AT_SECURE the collector obeyed the environment"; exit 1; }
if ls "$d"/evil.* >/dev/null 2>&1; then echo "FAIL: dumps written under AT_SECURE: $(ls "$d")"; exit 1; fi
# gperftools' and jemalloc's variables are the caller's environment too
out=$(cd "$d" && HEAPPROFILE=$d/gp MALLOC_CONF=prof_prefix:$d/mc as_nobody ./capped 2>"$d/err") || { echo "FAIL: capped run failed"; exit 1; }
if ls "$d"/gp.* "$d"/mc.* >/dev/null 2>&1 || grep -q "options from" "$d/err"; then
	echo "FAIL: HEAPPROFILE/MALLOC_CONF obeyed under AT_SECURE: $(ls "$d"; cat "$d/err")"; exit 1
fi
echo ok
