#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_run_demo.sh - `heaptap run -- build/examples/leaky` (what `make demo` does) names the demo's
# leak (open_session) and hog (cache_fill) as the top two live sites with the file:line of
# their malloc calls, writes the dump, folded stacks, flame graph and pprof files it lists, and
# passes the program's exit status on. With lg_prof_sample:0 the numbers are exact.
# Default sampling (R = 512 KiB): the leak (7.3 MiB in 128 B objects) gets Poisson(14.6)
# samples, the hog (8 x 1 MiB) 8 x Bernoulli(0.86); any other live site is one 4 KiB stdio
# buffer, worth at most ~R when sampled. The leak or hog falls below it only with 0 or 1
# samples: P < 1e-5.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
HEAPTAP=${HEAPTAP:-$ROOT/build/heaptap-asan}
HEAPTAP_LIB=${HEAPTAP_LIB:-$ROOT/build/libheaptap.so}
BIN=$ROOT/build/examples/leaky
[ -f "$HEAPTAP_LIB" ] || { echo "FAIL: $HEAPTAP_LIB is not built"; exit 1; }
[ -x "$BIN" ] || { echo "FAIL: $BIN is not built (make progs)"; exit 1; }
export HEAPTAP_LIB
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0
leak_line=$(grep -n 'struct session \*s = malloc' "$ROOT/examples/leaky.c" | cut -d: -f1)
hog_line=$(grep -n 'cache\[i\] = malloc' "$ROOT/examples/leaky.c" | cut -d: -f1)
[ -n "$leak_line" ] && [ -n "$hog_line" ] || { echo "FAIL: cannot find the malloc lines in leaky.c"; exit 1; }

# sites FILE: the report's site rows (after the header line), one per line.
sites() { sed -n '/allocation site (function file:line)/,/^$/p' "$1" | sed '1d;/^$/d'; }

# 1. Default sampling, as `make demo` runs it.
(cd "$TMP" && "$HEAPTAP" run --out "$TMP/out" -- "$BIN") >"$TMP/report" 2>"$TMP/err"
rc=$?
cat "$TMP/report"
[ $rc = 0 ] || { echo "FAIL: heaptap run exited $rc: $(cat "$TMP/err")"; exit 1; }
grep -q '^leaky: served 60000 requests' "$TMP/report" || { echo "FAIL: the program's own output is missing"; fail=1; }
top2=$(sites "$TMP/report" | head -n 2 | awk '{ print $(NF-1), $NF }' | sort)
want=$(printf '%s\n%s\n' "cache_fill $ROOT/examples/leaky.c:$hog_line" "open_session $ROOT/examples/leaky.c:$leak_line" | sort)
# The symbolizer may print the path as DWARF has it (relative); compare from "examples/".
norm() { sed 's| [^ ]*examples/| examples/|'; }
if [ "$(echo "$top2" | norm)" != "$(echo "$want" | norm)" ]; then
	echo "FAIL: top two sites are not the leak and the hog:"; echo "$top2"; echo "expected:"; echo "$want"; fail=1
else
	echo "ok: top two sites: $(echo $top2)"
fi
for kind in dump folded flame pprof; do
	f=$(grep -E "^  ($kind)" "$TMP/report" | awk '{ print $NF }')
	[ -n "$f" ] && [ -s "$f" ] || { echo "FAIL: no $kind file listed or it is empty ('$f')"; fail=1; continue; }
	case $kind in
	dump) head -n 1 "$f" | grep -q '^heap_v2/' || { echo "FAIL: $f is not heap_v2"; fail=1; } ;;
	folded) grep -vqE '^[^;]+(;[^;]+)* [0-9]+$' "$f" && { echo "FAIL: $f has non-folded lines"; fail=1; }
	        grep -qE ';cache_fill [0-9]+$' "$f" || { echo "FAIL: no cache_fill stack in $f"; fail=1; } ;;
	flame) grep -q '<svg' "$f" && grep -q 'open_session' "$f" || { echo "FAIL: $f is not a flame graph naming open_session"; fail=1; } ;;
	pprof) [ "$(head -c 2 "$f" | od -An -tx1 | tr -d ' ')" = 1f8b ] || { echo "FAIL: $f is not gzip"; fail=1; } ;;
	esac
done

# 2. Every allocation sampled: exact numbers.
(cd "$TMP" && "$HEAPTAP" run --out "$TMP/exact" --conf lg_prof_sample:0 -- "$BIN") >"$TMP/report0" 2>"$TMP/err0" ||
	{ echo "FAIL: exact run: $(cat "$TMP/err0")"; fail=1; }
sites "$TMP/report0" | grep -qE '^ +8\.0 MiB +[0-9.]+% +8  cache_fill ' || { echo "FAIL: exact hog row"; sites "$TMP/report0"; fail=1; }
sites "$TMP/report0" | grep -qE '^ +7\.3 MiB +[0-9.]+% +60000  open_session ' || { echo "FAIL: exact leak row"; sites "$TMP/report0"; fail=1; }
sites "$TMP/report0" | grep -q 'parse_request' && { echo "FAIL: freed churn (parse_request) reported as live"; fail=1; }

# High-water dumps give a peak line (the leak only grows, so the peak is at least 8 MiB).
(cd "$TMP" && "$HEAPTAP" run --out "$TMP/gd" --conf prof_gdump:true,prof_gdump_rate_ms:0 -- "$BIN") >"$TMP/report_gd" 2>&1
grep -qE '^heaptap: peak live heap seen: [0-9.]+ MiB \(largest of [1-9][0-9]* high-water dumps' "$TMP/report_gd" ||
	{ echo "FAIL: no peak line with prof_gdump:true"; cat "$TMP/report_gd"; fail=1; }
grep -q 'peak live heap' "$TMP/report" && { echo "FAIL: a peak line without high-water dumps"; fail=1; }

# 3. Exit status forwarding and a missing program.
"$HEAPTAP" run --out "$TMP/st" -q -- "$BIN" --no-such-flag >/dev/null 2>&1; [ $? = 0 ] || true
"$HEAPTAP" run --out "$TMP/st" -q -- /bin/false >/dev/null 2>&1
rc=$?; [ $rc = 1 ] || { echo "FAIL: exit status of /bin/false forwarded as $rc"; fail=1; }
"$HEAPTAP" run --out "$TMP/st" -- "$TMP/no-such-program" >/dev/null 2>"$TMP/err2"
rc=$?; [ $rc = 127 ] && grep -q 'No such file or directory' "$TMP/err2" || { echo "FAIL: missing program: exit $rc, $(cat "$TMP/err2")"; fail=1; }
"$HEAPTAP" run >/dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: run without a program is not a usage error"; fail=1; }
exit $fail
