# SPDX-License-Identifier: BSD-2-Clause
# tests/e2e/lib/test.sh - the prologue of the cli_*, flame_svg, report_series and
# readers_vs_jeprof tests: ROOT and HEAPTAP defaults, a scratch directory $TMP removed at exit,
# the failure flag $fail (the script ends with `exit $fail`), and check LABEL WANT GOT.
# Sourced right after the header, never run; it asserts nothing by itself.
set -u
ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
HEAPTAP=${HEAPTAP:-$ROOT/build/heaptap-asan}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0

# check LABEL WANT GOT: prints ok[LABEL] when GOT is WANT, else FAIL[LABEL] with a diff, and sets fail=1.
check() {
	if [ "$2" != "$3" ]; then
		echo "FAIL[$1]:"; diff <(echo "$2") <(echo "$3"); fail=1
	else
		echo "ok[$1]"
	fi
}
