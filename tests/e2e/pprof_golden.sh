#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# pprof_golden.sh - a real Go heap profile (tests/golden/go_heap.pb.gz, written by
# runtime/pprof.WriteHeapProfile; symbolized, 4 sample types) read by heaptap gives exactly
# the totals `go tool pprof -raw` shows for every sample type, with Go's function names and
# file:line; and `heaptap pprof` re-exports it with the same 4 totals and names, which go
# tool pprof reads back without the binary (/tmp/gohp/gohp never exists here).
set -u
command -v go >/dev/null 2>&1 || { echo "go is not installed"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export PPROF_TMPDIR="$T/pprof" HOME="$T"
fail() { echo "FAIL: $*"; exit 1; }
G="$ROOT/tests/golden/go_heap.pb.gz"

raw_sums() { # the four value columns of go tool pprof -raw
	awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
	     s && /^ *-?[0-9]+ +-?[0-9]+ +-?[0-9]+ +-?[0-9]+:/ { for (i = 1; i <= 4; i++) { v = $i; sub(":", "", v); t[i] += v } }
	     END { printf "%d %d %d %d\n", t[1], t[2], t[3], t[4] }'
}

go tool pprof -raw -symbolize=none "$G" >"$T/g.raw" 2>"$T/err" || { cat "$T/err"; fail "go tool pprof cannot read the golden profile"; }
read -r AO AS IO IS < <(raw_sums <"$T/g.raw")
echo "go tool pprof: alloc_objects $AO alloc_space $AS inuse_objects $IO inuse_space $IS"
[ "$IS" -gt 20000000 ] || fail "golden profile looks wrong (inuse_space $IS)"

total() { # heaptap top total for one value selector
	"$HEAPTAP" top --show_bytes "$@" 2>"$T/err" | awk '/^Total:/ { print $2 }'
}
for pair in "inuse_space $IS" "inuse_objects $IO" "alloc_space $AS" "alloc_objects $AO"; do
	set -- $pair
	got=$(total "--$1" "$G")
	[ "$got" = "$2" ] || { cat "$T/err"; fail "heaptap $1 total '$got', go tool pprof says $2"; }
done
"$HEAPTAP" top --lines "$G" >"$T/top" 2>"$T/err" || { cat "$T/err"; fail "heaptap top --lines"; }
grep -q 'main.leafBig /tmp/gohp/main.go:15$' "$T/top" || fail "leafBig main.go:15 missing: $(cat "$T/top")"

"$HEAPTAP" pprof "$G" -o "$T/re.pb.gz" 2>"$T/err" || { cat "$T/err"; fail "heaptap pprof"; }
go tool pprof -raw -symbolize=none "$T/re.pb.gz" >"$T/re.raw" 2>"$T/err" || { cat "$T/err"; fail "go tool pprof cannot read the re-export"; }
grep -q '^alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes$' "$T/re.raw" || fail "re-export sample types"
got=$(raw_sums <"$T/re.raw")
[ "$got" = "$AO $AS $IO $IS" ] || fail "re-export totals '$got', want '$AO $AS $IO $IS'"
go tool pprof -top -lines "$T/re.pb.gz" >"$T/re.top" 2>"$T/err" || { cat "$T/err"; fail "go tool pprof -top"; }
grep -Eq ' main\.leafBig /tmp/gohp/main\.go:15$' "$T/re.top" || fail "re-export lost leafBig: $(cat "$T/re.top")"
grep -Eq ' main\.leafSmall /tmp/gohp/main\.go:12$' "$T/re.top" || fail "re-export lost leafSmall"
echo "PASS: totals $got"
