#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bigdump.sh - the CLI on a huge dump: time and peak RSS of `heaptap top`, `heaptap collapsed`
# and `jeprof --text` (given JEPROF_TIMEOUT seconds; "timeout" when it takes longer) on the same
# heap_v2 dump of STACKS stacks (default 1 M, depth 10-40) whose frames are drawn from PCS
# distinct addresses (default 20,000) inside a real program of FUNCS generated functions, so
# symbolization is real work; DISTINCT=1 draws about half of the frames from fresh addresses
# instead (hundreds of thousands distinct). bench/gen_bigdump.py writes the program and the
# dump; both are kept in OUT (default build/bench/bigdump) and reused while the generator and
# the parameters stay the same. Prints one row per tool with the ratio to `heaptap top`.
# HEAPTAP=path measures another build (e.g. an older one); JEPROF= leaves jeprof out.
# A benchmark: asserts nothing; run it on a quiet machine.
set -u
cd "$(dirname "$0")/.."
STACKS=${STACKS:-1000000}
PCS=${PCS:-20000}
FUNCS=${FUNCS:-6000}
DISTINCT=${DISTINCT:-0}
JEPROF_TIMEOUT=${JEPROF_TIMEOUT:-600}
OUT=${OUT:-build/bench/bigdump}
HEAPTAP=${HEAPTAP:-build/heaptap}
JEPROF=${JEPROF-jeprof} # JEPROF= leaves jeprof out
die() { echo "bigdump: $*" >&2; exit 1; }
[ -x "$HEAPTAP" ] || die "$HEAPTAP is not built (make)"
[ -x /usr/bin/time ] || die "/usr/bin/time is not installed (apt-get install time)"
mkdir -p "$OUT"

gen=$(sha1sum bench/gen_bigdump.py | cut -c1-12)
prog=$OUT/bigprog-$FUNCS-$gen
if [ ! -x "$prog" ]; then
	python3 bench/gen_bigdump.py prog "$OUT/src" --funcs "$FUNCS" || die "generator failed"
	cc -O1 -g -o "$prog" "$OUT/src/bigprog.c" || die "compiling the program failed"
fi
flag=
[ "$DISTINCT" = 1 ] && flag=--distinct
dump=$OUT/big-$STACKS-$PCS-$DISTINCT-$FUNCS-$gen.heap
if [ ! -s "$dump" ]; then
	python3 bench/gen_bigdump.py dump "$prog" "$dump.tmp" --stacks "$STACKS" --pcs "$PCS" $flag || die "generator failed"
	mv "$dump.tmp" "$dump"
fi
echo "dump: $dump ($(($(stat -L -c %s "$dump") >> 20)) MiB, $STACKS stacks, $PCS pooled addresses, distinct=$DISTINCT)"

# measure NAME TIMEOUT CMD...: sets secs_NAME and kb_NAME ("timeout" when it ran out)
measure() {
	local name=$1 limit=$2
	shift 2
	local tf=$OUT/time.$name
	timeout "$limit" /usr/bin/time -f "%e %M" -o "$tf" "$@" >/dev/null 2>"$OUT/err.$name"
	local rc=$?
	if [ $rc -eq 124 ]; then
		eval "secs_$name=timeout kb_$name=-"
	elif [ $rc -ne 0 ]; then
		eval "secs_$name=failed kb_$name=-"
		echo "bigdump: $name exited $rc: $(tail -n 2 "$OUT/err.$name")" >&2
	else
		local s k
		read -r s k < <(tail -n 1 "$tf")
		eval "secs_$name=$s kb_$name=$k"
	fi
}

measure top 3600 "$HEAPTAP" top "$prog" "$dump"
measure collapsed 3600 "$HEAPTAP" collapsed "$prog" "$dump"
if [ -n "$JEPROF" ] && command -v "$JEPROF" >/dev/null; then
	measure jeprof "$JEPROF_TIMEOUT" "$JEPROF" --text "$prog" "$dump"
else
	secs_jeprof="not-run" kb_jeprof=-
fi

ratio() { # a b: a/b with two decimals, or "-"
	case "$1$2" in *[!0-9.]*) echo "-" ;; *) awk -v a="$1" -v b="$2" 'BEGIN { printf (b > 0 ? "%.2f" : "-"), a / b }' ;; esac
}
printf '%-20s %12s %14s %12s %12s\n' tool seconds "peak RSS MiB" "time/top" "RSS/top"
for t in top collapsed jeprof; do
	s=$(eval echo "\$secs_$t")
	k=$(eval echo "\$kb_$t")
	mib=-
	[ "$k" != - ] && mib=$((k / 1024))
	case $t in jeprof) label="jeprof --text" ;; *) label="heaptap $t" ;; esac
	printf '%-20s %12s %14s %12s %12s\n' "$label" "$s" "$mib" "$(ratio "$s" "$secs_top")" "$(ratio "$k" "$kb_top")"
done
