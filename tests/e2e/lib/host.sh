# SPDX-License-Identifier: BSD-2-Clause
# tests/e2e/lib/host.sh - helpers for the host_* tests: run a real program unprofiled and under
# the collector, compare what it printed and how it exited, and check the dumps it left.
# Sourced, never run. Every function fails the test (exit 1) with a message naming what differed.

ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
HEAPTAP_LIB=${HEAPTAP_LIB:-$ROOT/build/libheaptap.so}
HEAPTAP=${HEAPTAP:-$ROOT/build/heaptap}
export PATH="/usr/lib/go/bin:$PATH"
HOST_TMP=$(mktemp -d /tmp/heaptap-host.XXXXXX)
trap 'rm -rf "$HOST_TMP"' EXIT

host_fail() { echo "FAIL: $*" >&2; exit 1; }
host_skip() { echo "$*"; exit 77; }

# host_run TAG CONF CMD...: runs CMD in $HOST_TMP/TAG (cwd) with the collector preloaded and
# HEAPTAP_CONF=prof_prefix:$HOST_TMP/TAG/dumps/heaptap,CONF (CONF "-" = unprofiled). Leaves
# out (stdout), err (stderr) and rc there.
host_run() {
	local tag=$1 conf=$2; shift 2
	local d=$HOST_TMP/$tag
	mkdir -p "$d/dumps"
	if [ "$conf" = - ]; then
		(cd "$d" && "$@" >"$d/out" 2>"$d/err"); echo $? >"$d/rc"
	else
		(cd "$d" && LD_PRELOAD="$HEAPTAP_LIB${LD_PRELOAD:+:$LD_PRELOAD}" \
			HEAPTAP_CONF="prof_prefix:$d/dumps/heaptap${conf:+,$conf}" "$@" >"$d/out" 2>"$d/err")
		echo $? >"$d/rc"
	fi
}

# host_compare NAME CMD...: runs CMD unprofiled, at the default rate and at lg_prof_sample:0
# (plus $HOST_CONF, if set, in both). Same stdout and exit code each time, no heaptap error line,
# at least one final dump each.
host_compare() {
	local name=$1; shift
	host_run "$name.plain" - "$@"
	local conf tag
	for conf in "" "lg_prof_sample:0"; do
		tag="$name.${conf:-default}"
		host_run "$tag" "$conf${HOST_CONF:+${conf:+,}$HOST_CONF}" "$@"
		cmp -s "$HOST_TMP/$name.plain/out" "$HOST_TMP/$tag/out" ||
			{ diff "$HOST_TMP/$name.plain/out" "$HOST_TMP/$tag/out" | head -20 >&2; host_fail "$name: stdout differs under the collector ($tag)"; }
		[ "$(cat "$HOST_TMP/$name.plain/rc")" = "$(cat "$HOST_TMP/$tag/rc")" ] ||
			host_fail "$name: exit $(cat "$HOST_TMP/$tag/rc") under the collector ($tag), $(cat "$HOST_TMP/$name.plain/rc") without"
		if grep -q '^heaptap: ' "$HOST_TMP/$tag/err"; then
			grep '^heaptap: ' "$HOST_TMP/$tag/err" | head -5 >&2
			host_fail "$name: the collector complained ($tag)"
		fi
		ls "$HOST_TMP/$tag/dumps/"heaptap.*.f.heap >/dev/null 2>&1 || host_fail "$name: no final dump ($tag)"
		echo "$name ($tag): same output and exit code ($(cat "$HOST_TMP/$tag/rc")), $(ls "$HOST_TMP/$tag/dumps" | wc -l) dump file(s)"
	done
}

# host_dumps TAG [KIND]: the dumps of a run of one kind (f final by default; m, t, u, i...), one per line.
host_dumps() { ls "$HOST_TMP/$1/dumps/"heaptap.*."${2:-f}"*.heap 2>/dev/null; }

# host_max_total TAG KIND: the largest live total (bytes) among the run's dumps of that kind.
host_max_total() {
	local f best=0 t
	for f in $(host_dumps "$1" "$2"); do
		t=$("$HEAPTAP" top --show_bytes --no-symbolize "$f" | awk '/^Total:/ { print $2 }')
		[ "${t:-0}" -gt "$best" ] && best=$t
	done
	echo "$best"
}

# host_check_parse TAG: every dump of the run parses (heaptap top exits 0 and prints a Total).
host_check_parse() {
	local f n=0
	for f in "$HOST_TMP/$1/dumps/"*.heap; do
		[ -e "$f" ] || continue
		"$HEAPTAP" top --no-symbolize "$f" >"$HOST_TMP/parse.out" 2>&1 || { cat "$HOST_TMP/parse.out" >&2; host_fail "$1: $f does not parse"; }
		n=$((n + 1))
	done
	[ $n -gt 0 ] || host_fail "$1: no dumps to parse"
	echo "$1: $n dump(s) parse"
}

# host_top_has TAG DUMP BINARY FUNC MINPCT: FUNC's cumulative share of live bytes in DUMP (by
# heaptap top, symbolized against BINARY) is at least MINPCT percent.
host_top_has() {
	local tag=$1 dump=$2 bin=$3 func=$4 min=$5 pct
	"$HEAPTAP" top --show_bytes "$bin" "$dump" >"$HOST_TMP/top.out" 2>"$HOST_TMP/top.err" ||
		{ cat "$HOST_TMP/top.err" >&2; host_fail "$tag: heaptap top failed on $dump"; }
	pct=$(awk -v f="$func" '$6 == f || index($0, " " f) { gsub("%", "", $5); if ($5 > best) best = $5 } END { print best + 0 }' "$HOST_TMP/top.out")
	echo "$tag: $func holds $pct% of live bytes (cum), want >= $min%"
	awk -v p="$pct" -v m="$min" 'BEGIN { exit !(p >= m) }' || { head -15 "$HOST_TMP/top.out" >&2; host_fail "$tag: $func holds $pct% < $min%"; }
}

# host_jeprof_total DUMP BINARY: the real jeprof reads the dump (prints a Total line).
host_jeprof_reads() {
	jeprof --text --show_bytes "$2" "$1" >"$HOST_TMP/jeprof.out" 2>"$HOST_TMP/jeprof.err" ||
		{ tail -5 "$HOST_TMP/jeprof.err" >&2; host_fail "jeprof cannot read $1"; }
	grep -q '^Total: ' "$HOST_TMP/jeprof.out" || host_fail "jeprof printed no Total for $1"
	echo "jeprof reads $(basename "$1"): $(grep '^Total: ' "$HOST_TMP/jeprof.out")"
}
