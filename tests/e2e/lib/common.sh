# SPDX-License-Identifier: BSD-2-Clause
# tests/e2e/lib/common.sh - shell helpers shared by the accuracy_* and collector_* test scripts:
# scratch directory, skip/fail, running a program under the collector (or, to validate a
# script's own logic, under jemalloc's profiler) and finding the dumps it wrote. Sourced, never
# run; it starts no profiler by itself and asserts nothing. See tests/e2e/lib/README.md.

ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
HEAPTAP_BUILD=${HEAPTAP_BUILD:-$ROOT/build}
HEAPTAP_LIB=${HEAPTAP_LIB:-$HEAPTAP_BUILD/libheaptap.so}
PROGS=$HEAPTAP_BUILD/progs
ACC_PY="python3 $ROOT/tests/e2e/lib/accuracy.py"
# heaptap (default) or jemalloc: the second runs the same script against jemalloc's own profiler.
PROFILER=${HEAPTAP_ACCURACY_PROFILER:-heaptap}
JEMALLOC_SO=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
export PATH="/usr/lib/go/bin:$PATH"

ht_skip() { echo "skip: $*"; exit 77; }
ht_fail() { echo "FAIL: $*"; exit 1; }

# ht_init: makes $TMP (removed at exit) and skips when the collector or a program is missing.
ht_init() {
	TMP=$(mktemp -d)
	trap 'rm -rf "$TMP"' EXIT
	case $PROFILER in
	heaptap)
		[ -f "$HEAPTAP_LIB" ] || ht_skip "collector $HEAPTAP_LIB is not built"
		# Run a private copy, so a rebuild of build/ during the test cannot truncate it.
		cp "$HEAPTAP_LIB" "$TMP/libheaptap.so" || ht_fail "cannot copy $HEAPTAP_LIB"
		HEAPTAP_LIB=$TMP/libheaptap.so
		# A collector still under construction exports neither the malloc family nor the API.
		local syms
		syms=$(nm -D --defined-only "$HEAPTAP_LIB" 2>/dev/null | awk '{print $3}')
		for s in malloc free heaptap_dump; do
			echo "$syms" | grep -qx "$s" || ht_skip "collector $HEAPTAP_LIB does not export $s yet"
		done ;;
	jemalloc) [ -f "$JEMALLOC_SO" ] || ht_skip "$JEMALLOC_SO is not installed" ;;
	*) ht_fail "unknown HEAPTAP_ACCURACY_PROFILER=$PROFILER" ;;
	esac
}

# ht_need_prog NAME: sets BIN to the path of build/progs/NAME (resolved, as jeprof wants the
# program's exact path), or skips the test when it is not built.
ht_need_prog() {
	[ -x "$PROGS/$1" ] || ht_skip "$PROGS/$1 is not built (make progs)"
	BIN=$(readlink -f "$PROGS/$1")
}

# ht_run DIR CONF CMD...: runs CMD in DIR under the profiler with dumps prefixed DIR/ht; CONF is
# extra HEAPTAP_CONF (for jemalloc, heaptap-only keys are dropped). Exit status is CMD's.
ht_run() {
	local dir=$1 conf=$2; shift 2
	mkdir -p "$dir"
	if [ "$PROFILER" = jemalloc ]; then
		local jc
		# Drop the keys jemalloc does not have.
		jc=$(echo "$conf" | tr ',' '\n' | grep -v -e '^prof_format:' -e '^prof_unwind:' \
			-e '^prof_time_interval:' -e '^prof_signal:' -e '^prof_max_dumps:' \
			-e '^prof_gdump_rate_ms:' -e '^$' | paste -sd, -)
		(cd "$dir" && LD_PRELOAD=$JEMALLOC_SO \
			MALLOC_CONF="prof:true,prof_final:true,prof_prefix:$dir/ht${jc:+,$jc}" "$@")
	else
		(cd "$dir" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF="prof_prefix:$dir/ht${conf:+,$conf}" "$@")
	fi
}

# ht_final DIR: the path of the one final dump (DIR/ht.<pid>.<seq>.f.heap), or fails.
ht_final() {
	local f n
	n=$(ls "$1"/ht.*.f.heap 2>/dev/null | wc -l)
	[ "$n" = 1 ] || { echo "FAIL: expected one final dump in $1, found $n:" >&2; ls -l "$1" >&2; return 1; }
	f=$(ls "$1"/ht.*.f.heap)
	echo "$f"
}

# ht_pprof_input DUMP: the file to give go tool pprof for this run: heaptap's .pb.gz twin, or
# (jemalloc) the dump converted to the gperftools text Go reads.
ht_pprof_input() {
	if [ "$PROFILER" = jemalloc ]; then
		$ACC_PY heapv2-to-legacy "$1" >"${1%.heap}.legacy" || return 1
		echo "${1%.heap}.legacy"
	else
		[ -s "${1%.heap}.pb.gz" ] || { echo "FAIL: no pprof twin ${1%.heap}.pb.gz" >&2; return 1; }
		echo "${1%.heap}.pb.gz"
	fi
}

# ht_mode: which truth column applies: requested sizes (heaptap) or usable sizes (jemalloc).
ht_mode() { [ "$PROFILER" = jemalloc ] && echo usable || echo req; }

# ht_pprof_col: the column go tool pprof reports a C site in: flat (heaptap's frame 0 is the
# site) or, under jemalloc, cum (Go keeps jemalloc's unsymbolized internal frames as leaves).
ht_pprof_col() { [ "$PROFILER" = jemalloc ] && echo "--col=cum"; }

# ht_jeprof PROG DUMP OUT: jeprof's byte report into OUT (stderr into OUT.err).
ht_jeprof() {
	jeprof --text --show_bytes "$1" "$2" >"$3" 2>"$3.err" || { cat "$3.err"; return 1; }
}

# ht_gopprof PROG INPUT OUT: go tool pprof's in-use bytes, symbolized from the local binary.
ht_gopprof() {
	go tool pprof -top -unit=B -sample_index=inuse_space -symbolize=local \
		-nodecount=100000 -nodefraction=0 -edgefraction=0 \
		"$1" "$2" >"$3" 2>"$3.err" || { cat "$3.err"; return 1; }
}

# ht_stat FILE EXPR: evaluates the Python expression EXPR over s, the JSON object printed on
# FILE's "stats <len> {...}" line (heaptap_stats_json); prints the result.
ht_stat() {
	python3 -c 'import json, sys
line = next((l for l in open(sys.argv[1]) if l.startswith("stats ")), None)
if line is None: sys.exit("FAIL: no stats line in " + sys.argv[1])
s = json.loads(line.split(" ", 2)[2])
print(eval(sys.argv[2]))' "$1" "$2"
}

# ht_failpath_run PREFIX WHAT: runs coll_triggers manual with dumps going to PREFIX (a place
# where they cannot be written) and checks the host is unharmed: exit 0, the explicit dump
# into a good directory still works, exactly one "heaptap: " line on stderr, and the
# statistics count the failure. Returns nonzero (after printing why) on any violation.
ht_failpath_run() {
	local prefix=$1 what=$2 ok=$TMP/good out=$TMP/fp.out err=$TMP/fp.err rc n
	mkdir -p "$ok"
	ht_need_prog coll_triggers
	(cd "$ok" && LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF="prof_prefix:$prefix" "$BIN" manual "$ok") \
		>"$out" 2>"$err"
	rc=$?
	echo "-- stdout:"; cut -c1-400 "$out"; echo "-- stderr:"; cat "$err"
	[ $rc = 0 ] || { echo "FAIL: $what: the host exited with $rc"; return 1; }
	grep -q '^heaptap_dump(explicit.heap) = 0$' "$out" ||
		{ echo "FAIL: $what: a dump to a good path failed after the bad one"; return 1; }
	grep -q '^heaptap_dump(NULL) = -[0-9]' "$out" ||
		{ echo "FAIL: $what: heaptap_dump(NULL) did not return a negative errno"; return 1; }
	n=$(grep -c '^heaptap: ' "$err")
	[ "$n" = 1 ] || { echo "FAIL: $what: expected one 'heaptap: ' line on stderr, got $n"; return 1; }
	ht_stat "$out" 'sum(s["dump_errors"].values())' >"$TMP/fp.n" || return 1
	echo "dump errors counted: $(cat "$TMP/fp.n")"
	[ "$(cat "$TMP/fp.n")" -ge 1 ] || { echo "FAIL: $what: the statistics count no dump error"; return 1; }
	echo "$what: host unharmed, one stderr line, error counted"
}
