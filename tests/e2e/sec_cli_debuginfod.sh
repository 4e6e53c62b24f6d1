#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sec_cli_debuginfod.sh - a debuginfod server that accepts connections and never answers does
# not stall the CLI (issue 14, item 7): each file is waited for 5 s by default (libdebuginfod
# alone waits 90 s and retries), a progress line says what it waits for, a warning says it
# gave up, and HEAPTAP_DEBUGINFOD_BUDGET caps the whole run's waiting (then no more files are
# asked for). The report still comes out: exit 0, the frames as addresses.
. "$(dirname "$0")/lib/test.sh"
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }
ldconfig -p | grep -q libdebuginfod.so.1 || { echo "libdebuginfod.so.1 is not installed"; exit 77; }

# A server on a free loopback port that accepts and never says a word.
python3 - "$TMP/port" <<'PY' &
import socket, sys
s = socket.socket()
s.bind(('127.0.0.1', 0))
s.listen(64)
open(sys.argv[1] + '.tmp', 'w').write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + '.tmp', sys.argv[1])
held = []
while True:
    c, _ = s.accept()
    held.append(c)
PY
srv=$!
trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null; rm -rf "$TMP"' EXIT
for i in $(seq 1 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
[ -s "$TMP/port" ] || { echo "FAIL: the silent server did not start"; exit 1; }
port=$(cat "$TMP/port")

# Two libraries that exist nowhere, with build IDs: the symbolizer asks debuginfod for both.
cat >"$TMP/p.heap" <<'EOT'
heap_v2/1
  t*: 2: 200 [0: 0]
@ 0x7f0000001234
  t*: 1: 100 [0: 0]
@ 0x7f1000001234
  t*: 1: 100 [0: 0]
MAPPED_LIBRARIES:
7f0000000000-7f0000100000 r-xp 00000000 00:00 0 /nonexistent/liba.so
7f1000000000-7f1000100000 r-xp 00000000 00:00 0 /nonexistent/libb.so
# heaptap: mapping start=0x7f0000000000 limit=0x7f0000100000 path=/nonexistent/liba.so build_id=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
# heaptap: mapping start=0x7f1000000000 limit=0x7f1000100000 path=/nonexistent/libb.so build_id=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
EOT
run() { # LABEL ENV...: heaptap top with a fresh cache; 60 s at most (the old default took 2 x 3 x 90 s)
	local label=$1; shift
	rm -rf "$TMP/cache"; mkdir "$TMP/cache"
	env -u DEBUGINFOD_TIMEOUT -u DEBUGINFOD_RETRY_LIMIT -u HEAPTAP_DEBUGINFOD_BUDGET \
		DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$TMP/cache" HEAPTAP_DEBUG_ROOT="$TMP/none" "$@" \
		timeout -k 5 60 "$HEAPTAP" top --show_bytes "$TMP/p.heap" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	echo "[$label] exit $rc"; sed 's/^/  | /' "$TMP/err"
}
want_out="Total: 200 B
     100  50.0%  50.0%      100  50.0% liba.so+0x1234
     100  50.0% 100.0%      100  50.0% libb.so+0x1234"

run default
check "default: exit" 0 "$rc"
check "default: report" "$want_out" "$(cat "$TMP/out")"
for b in aaaa bbbb; do
	grep -q "^heaptap: debuginfod: waiting for the executable of $b" "$TMP/err" ||
		{ echo "FAIL[default]: no progress line for $b"; fail=1; }
	grep -q "^heaptap: warning: debuginfod: no executable for $b.* after [0-9.]* s: .*DEBUGINFOD_TIMEOUT" "$TMP/err" ||
		{ echo "FAIL[default]: no time-out warning for $b"; fail=1; }
done

run budget HEAPTAP_DEBUGINFOD_BUDGET=1
check "budget: exit" 0 "$rc"
check "budget: report" "$want_out" "$(cat "$TMP/out")"
grep -q "^heaptap: warning: debuginfod: .*budget (HEAPTAP_DEBUGINFOD_BUDGET=1): no more files are asked for" "$TMP/err" ||
	{ echo "FAIL[budget]: no budget warning"; fail=1; }
check "budget: files waited for" 1 "$(grep -c '^heaptap: debuginfod: waiting for' "$TMP/err")"
exit $fail
