#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sym_debuginfod.sh - debug info served by a local debuginfod (127.0.0.1 only): with
# DEBUGINFOD_URLS set, a stripped binary whose debug file exists nowhere locally resolves to the
# same frames as the unstripped one; without it, to names only.
. "$(dirname "$0")/sym_common.inc"
command -v debuginfod >/dev/null || skip "debuginfod is not installed"
[ -e /usr/lib/x86_64-linux-gnu/libdebuginfod.so.1 ] || ldconfig -p | grep -q libdebuginfod.so.1 || skip "libdebuginfod.so.1 is not installed"
src=$ROOT/tests/progs/sym_inline.c
gcc -O2 -g -o "$T/full" "$src" || fail "cannot build"
callsites "$T/full" >"$T/sites"
a2l() { "$HT" addr2line -f -i -C -a -e "$1" <"$T/sites"; }
a2l "$T/full" >"$T/want"
mkdir -p "$T/srv" "$T/bin" "$T/cache" "$T/emptyroot"
objcopy --only-keep-debug "$T/full" "$T/srv/prog.debug"
objcopy --strip-debug "$T/full" "$T/bin/prog"
bid=$(readelf -n "$T/full" | awk '/Build ID/ {print $3}')
export HEAPTAP_DEBUG_ROOT=$T/emptyroot
unset DEBUGINFOD_URLS
a2l "$T/bin/prog" >"$T/nolines"
grep -q "sym_inline.c:[0-9]" "$T/nolines" && fail "lines found before debuginfod was asked"

pid=
port=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
for try in 1 2 3 4 5; do
	port=$((20000 + (RANDOM % 20000)))
	debuginfod -p "$port" -d "$T/db.sqlite" -F "$T/srv" -t 0 -g 0 >"$T/dbgd.log" 2>&1 &
	pid=$!
	# Wait until it listens and has indexed the debug file.
	for i in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/buildid/$bid/debuginfo")
		[ "$code" = 200 ] && break 2
		sleep 0.2
	done
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=
done
[ -n "$pid" ] || { tail -n 20 "$T/dbgd.log"; fail "debuginfod did not serve the debug file"; }
echo "debuginfod on 127.0.0.1:$port serves $bid"

DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$T/cache a2l "$T/bin/prog" >"$T/got" || fail "heaptap addr2line failed"
cmp -s "$T/want" "$T/got" || { diff "$T/want" "$T/got" | head -n 20; fail "frames differ from the unstripped binary"; }
ls "$T/cache/$bid/debuginfo" >/dev/null 2>&1 || fail "nothing was fetched into DEBUGINFOD_CACHE_PATH"
echo "ok: debug info fetched from debuginfod"
