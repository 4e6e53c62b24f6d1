# SPDX-License-Identifier: BSD-2-Clause
# tests/e2e/lib/bigdump.sh (sourced after test.sh) - the common part of the tests on big dumps
# (cli_bigdump_*.sh): the generated program their dumps symbolize against, and peak-RSS runs
# of the plain CLI (ASan's shadow memory would swamp the numbers), and the generator's common
# start. The dumps themselves come from bench/gen_bigdump.py's write_paths_dump, whose sums the
# tests check.

PLAIN=${HEAPTAP_PLAIN:-$ROOT/build/heaptap}

# bigdump_prog: writes and compiles the generated program ($TMP/prog, 60 functions with
# DWARF); skips without /usr/bin/time or a C compiler, fails without the plain CLI.
bigdump_prog() {
	[ -x /usr/bin/time ] || { echo "skip: /usr/bin/time is not installed"; exit 77; }
	command -v cc >/dev/null || { echo "skip: no C compiler"; exit 77; }
	[ -x "$PLAIN" ] || { echo "FAIL: $PLAIN is not built"; exit 1; }
	python3 "$ROOT/bench/gen_bigdump.py" prog "$TMP/src" --funcs 60 || { echo "FAIL: generator"; exit 1; }
	cc -O1 -g -o "$TMP/prog" "$TMP/src/bigprog.c" || { echo "FAIL: compiling the program"; exit 1; }
}

# bigdump_gen: runs the Python on stdin after the generator's common start, which defines g
# (bench/gen_bigdump.py), prog ($TMP/prog), tmp ($TMP), want ($TMP/want.txt, for the sums the
# test expects), rnd (random.Random(5)) and paths (40 call paths of prog's functions, leaf
# first; every stack of a dump draws fresh addresses inside them). Fails the test when the
# Python wrote no want.txt.
bigdump_gen() {
	{
		cat <<'PY'
import os, random, sys
sys.path.insert(0, sys.argv[1])
import gen_bigdump as g
prog, tmp = sys.argv[2:4]
want = os.path.join(tmp, "want.txt")
rnd = random.Random(5)
paths = g.random_paths(rnd, sorted(g.generated_functions(prog)))
PY
		cat
	} | python3 - "$ROOT/bench" "$TMP/prog" "$TMP"
	[ -s "$TMP/want.txt" ] || { echo "FAIL: the generator wrote nothing"; exit 1; }
}

# bigdump_run NAME ARGS...: runs "$PLAIN" ARGS under /usr/bin/time; its output goes to
# $TMP/out.NAME and its peak RSS in KiB to $TMP/rss.NAME (the last line). Fails the test
# when the command fails.
bigdump_run() {
	local name=$1
	shift
	/usr/bin/time -f "%M" -o "$TMP/rss.$name" "$PLAIN" "$@" >"$TMP/out.$name" 2>"$TMP/err" ||
		{ echo "FAIL: heaptap $* exited $?: $(cat "$TMP/err")"; exit 1; }
}

# bigdump_rss NAME: the peak RSS in KiB of bigdump_run NAME.
bigdump_rss() {
	tail -n 1 "$TMP/rss.$1"
}

# bigdump_size FILE: sets size_kb to FILE's size in KiB, after checking that the generator
# made it big.
bigdump_size() {
	size_kb=$(($(stat -c %s "$1") / 1024))
	[ "$size_kb" -gt 80000 ] || { echo "FAIL: the generated dump has only $size_kb KiB"; exit 1; }
}

# bigdump_rss_within WHAT RSS AGAINST AGAINST_RSS MARGIN WHY: ok when the peak RSS RSS (KiB)
# of WHAT is at most MARGIN KiB above AGAINST's AGAINST_RSS; else FAIL naming WHY (what the
# old code kept) and sets fail=1.
bigdump_rss_within() {
	if [ "$2" -le $(($4 + $5)) ]; then
		echo "ok[$1 peak RSS $2 KiB, $3's $4 KiB, for $size_kb KiB dumps]"
	else
		echo "FAIL[$1 peak RSS $2 KiB vs $3's $4 KiB for $size_kb KiB dumps: $6]"
		fail=1
	fi
}
