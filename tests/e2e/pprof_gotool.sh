#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# pprof_gotool.sh - `go tool pprof` reads what heaptap's pprof writers produce, with the
# numbers the source holds:
#  1. the in-process writer (pprof_write) and the legacy text writer (legacy_write), driven by
#     a small C program over a synthetic dump_source whose stacks are real return addresses
#     of a test binary: -raw totals equal the source's truncated values exactly (proto) or
#     within one object per record (legacy, after go's own Poisson scaling);
#  2. the CLI exporter (`heaptap pprof`) of a hand-written heap_v2 profile: totals equal
#     jeprof's scaling of the input, and `go tool pprof -top -lines` shows function names and
#     file:line with the binary moved away (so nothing was re-symbolized);
#  3. heaptap reads both outputs back with the same totals.
set -u
command -v go >/dev/null 2>&1 || { echo "go is not installed"; exit 77; }
command -v cc >/dev/null 2>&1 || { echo "cc is not installed"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export PPROF_TMPDIR="$T/pprof" HOME="$T"
fail() { echo "FAIL: $*"; exit 1; }

# ---- a test program with known functions (non-PIE: addresses are link-time addresses) ----
cat >"$T/prog.c" <<'EOF'
#include <stdlib.h>
void *keep[16];
__attribute__((noinline)) void *leaf_a(size_t n) { return malloc(n); }
__attribute__((noinline)) void *leaf_b(size_t n) { return malloc(n); }
__attribute__((noinline)) void mid(int i) { keep[i] = leaf_a(1024); keep[i + 1] = leaf_b(4096); }
int main(void) { mid(0); return keep[0] == 0; }
EOF
cc -O0 -g -no-pie -fno-omit-frame-pointer -fno-inline -o "$T/prog" "$T/prog.c" || fail "cannot build the test program"
sym() { nm "$T/prog" | awk -v n="$1" '$3 == n { print $1 }'; }
hex() { printf '0x%x' $((0x$(sym "$1") + $2)); }
A=$(hex leaf_a 16) B=$(hex leaf_b 16) M1=$(hex mid 16) M2=$(hex mid 32) MAIN=$(hex main 16)
[ -n "$(sym leaf_a)" ] && [ -n "$(sym main)" ] || fail "nm found no symbols"
TEXT=$(readelf -lW "$T/prog" | awk '$1 == "LOAD" && / R E / { print $2, $3, $6; exit }')
read -r TOFF TVADDR TSIZE <<<"$TEXT"
TSTART=$((TVADDR & ~0xfff)) TEND=$(((TVADDR + TSIZE + 0xfff) & ~0xfff))

# ---- 1. the in-process writers through a driver ----
cat >"$T/driver.c" <<'EOF'
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include "base/outbuf.h"
#include "profile/inproc/legacy_write.h"
#include "profile/inproc/pprof_write.h"

#define R 524288.0
static uintptr_t pcs[3][3];
static struct dump_stack st[3];
static int each(const struct dump_source *s, int (*fn)(void *, const struct dump_stack *), void *c)
{
	(void)s;
	for (int i = 0; i < 3; i++)
		if (fn(c, &st[i]))
			return 1;
	return 0;
}
int main(int argc, char **argv)
{
	/* argv: outdir A B M1 M2 MAIN prog start end offset */
	uintptr_t a = strtoull(argv[2], 0, 16), b = strtoull(argv[3], 0, 16);
	uintptr_t m1 = strtoull(argv[4], 0, 16), m2 = strtoull(argv[5], 0, 16), mn = strtoull(argv[6], 0, 16);
	uintptr_t p0[3] = { a, m1, mn }, p1[3] = { b, m2, mn }, p2[3] = { m1, mn, 0 };
	memcpy(pcs[0], p0, sizeof p0); memcpy(pcs[1], p1, sizeof p1); memcpy(pcs[2], p2, sizeof p2);
	/* k samples of one size each, weighted as the sampler weights them */
	double size[3] = { 1024, 4096, 1048576 };
	int k[3] = { 3, 2, 5 }, ka[3] = { 7, 2, 9 };
	for (int i = 0; i < 3; i++) {
		double w = 1 / -expm1(-size[i] / R);
		st[i].pcs = pcs[i];
		st[i].depth = i == 2 ? 2 : 3;
		st[i].live_objs = k[i] * w;
		st[i].live_bytes = k[i] * w * size[i];
		st[i].alloc_objs = ka[i] * w;
		st[i].alloc_bytes = ka[i] * w * size[i];
	}
	static const uint8_t bid[4] = { 0xab, 0xcd, 0x01, 0x23 };
	struct dump_mapping map = { strtoull(argv[8], 0, 0), strtoull(argv[9], 0, 0),
	                            strtoull(argv[10], 0, 0), argv[7], bid, 4, "r-xp", 0 };
	char maps[512];
	snprintf(maps, sizeof maps, "%08llx-%08llx r-xp %08llx 08:01 1 %s\n", (unsigned long long)map.start,
	         (unsigned long long)map.limit, (unsigned long long)map.offset, argv[7]);
	struct dump_source src = {.sample_period = 524288, .accum = 1, .time_ns = 1700000000000000000ll,
	                          .start_time_ns = 1690000000000000000ll, .pid = 77, .exe_path = argv[7],
	                          .cmdline = "prog --test", .trigger = "manual", .maps_text = maps,
	                          .maps_len = strlen(maps), .mappings = &map, .nmappings = 1,
	                          .for_each_stack = each};
	char path[4096];
	snprintf(path, sizeof path, "%s/w.pb.gz", argv[1]);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int rc = pprof_write(&src, fd);
	close(fd);
	if (rc) { fprintf(stderr, "pprof_write: %d\n", rc); return 1; }
	snprintf(path, sizeof path, "%s/legacy.txt", argv[1]);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char buf[256]; /* small on purpose: the writer flushes as it goes */
	struct outbuf ob;
	outbuf_init(&ob, buf, sizeof buf, fd);
	legacy_write(&src, &ob);
	outbuf_flush(&ob);
	close(fd);
	/* expected: truncated per stack (proto), and the unbiased sums (legacy) */
	long long t[4] = { 0, 0, 0, 0 };
	double u[4] = { 0, 0, 0, 0 };
	for (int i = 0; i < 3; i++) {
		t[0] += (long long)st[i].alloc_objs; t[1] += (long long)st[i].alloc_bytes;
		t[2] += (long long)st[i].live_objs; t[3] += (long long)st[i].live_bytes;
		u[0] += st[i].alloc_objs; u[1] += st[i].alloc_bytes; u[2] += st[i].live_objs; u[3] += st[i].live_bytes;
	}
	printf("%lld %lld %lld %lld %.3f %.3f %.3f %.3f\n", t[0], t[1], t[2], t[3], u[0], u[1], u[2], u[3]);
	return ob.err ? 1 : 0;
}
EOF
cc -std=c11 -D_GNU_SOURCE -O1 -I"$ROOT" -o "$T/driver" "$T/driver.c" "$ROOT/profile/inproc/pprof_write.c" \
	"$ROOT/profile/inproc/pbwrite.c" "$ROOT/profile/inproc/pprof_proto.c" "$ROOT/profile/inproc/legacy_write.c" "$ROOT/profile/inproc/unbias.c" "$ROOT/base/outbuf.c" "$ROOT/base/deflate.c" -lm ||
	fail "cannot build the driver"
read -r E0 E1 E2 E3 U0 U1 U2 U3 < <("$T/driver" "$T" "$A" "$B" "$M1" "$M2" "$MAIN" "$T/prog" \
	"$TSTART" "$TEND" "$TOFF") || fail "driver failed"
echo "source: truncated $E0 $E1 $E2 $E3; unbiased $U0 $U1 $U2 $U3"

# Sums the four value columns of `go tool pprof -raw` samples.
raw_sums() {
	awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
	     s && /^ *-?[0-9]+ +-?[0-9]+ +-?[0-9]+ +-?[0-9]+:/ { for (i = 1; i <= 4; i++) { v = $i; sub(":", "", v); t[i] += v } }
	     END { printf "%d %d %d %d\n", t[1], t[2], t[3], t[4] }'
}

go tool pprof -raw -symbolize=none "$T/w.pb.gz" >"$T/w.raw" 2>"$T/w.err" || { cat "$T/w.err"; fail "go tool pprof cannot read pprof_write output"; }
grep -q '^alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes' "$T/w.raw" || fail "sample types: $(grep -A1 Samples: "$T/w.raw")"
grep -q '^Period: 524288' "$T/w.raw" || fail "period"
got=$(raw_sums <"$T/w.raw")
[ "$got" = "$E0 $E1 $E2 $E3" ] || fail "pprof_write totals '$got', want '$E0 $E1 $E2 $E3'"
# every frame is stored at return address - 1, mapped to the program, build id in hex
want_leaf=$(printf '0x%x' $((A - 1)))
grep -Eq "^ +[0-9]+: $want_leaf M=1" "$T/w.raw" || fail "no location at $want_leaf (pc - 1): $(sed -n '/^Locations/,$p' "$T/w.raw")"
grep -q "/prog abcd0123" "$T/w.raw" || fail "mapping or build id missing: $(sed -n '/^Mappings/,$p' "$T/w.raw")"
grep -q 'heaptap: pid=77' "$T/w.raw" || fail "pid comment missing"
echo "pprof_write: go tool pprof totals $got"

head -n 1 "$T/legacy.txt" | grep -Eq '^heap profile: +[0-9]+: +[0-9]+ \[ +[0-9]+: +[0-9]+\] @ heap_v2/524288$' ||
	fail "legacy header: $(head -n 1 "$T/legacy.txt")"
go tool pprof -raw -symbolize=none "$T/legacy.txt" >"$T/l.raw" 2>"$T/l.err" || { cat "$T/l.err"; fail "go tool pprof cannot read legacy_write output"; }
got=$(raw_sums <"$T/l.raw")
# go truncates each of the 3 records after scaling: at most 1 object and 1 average size off each
awk -v got="$got" -v u="$U0 $U1 $U2 $U3" 'BEGIN {
	split(got, g, " "); split(u, w, " "); tol[1] = 3; tol[3] = 3; tol[2] = 3 * 1048577; tol[4] = 3 * 1048577
	for (i = 1; i <= 4; i++) if (g[i] - w[i] > tol[i] || w[i] - g[i] > tol[i]) { printf "value %d: %s vs %s\n", i, g[i], w[i]; exit 1 } }' ||
	fail "legacy totals after go's scaling '$got', want about '$U0 $U1 $U2 $U3'"
echo "legacy_write: go tool pprof totals $got"
# jeprof reads the same legacy text with the same scaling (and leaves frame 0 as is)
if command -v jeprof >/dev/null 2>&1; then
	jt=$(jeprof --text --show_bytes "$T/prog" "$T/legacy.txt" 2>/dev/null | awk '/^Total:/ { print $2 }')
	awk -v g="$jt" -v w="$U3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 3 * 1048577) }' ||
		fail "jeprof total of the legacy text '$jt', want about $U3"
	echo "legacy_write: jeprof total $jt"
fi

# heaptap reads pprof_write's output back: the same inuse_space total
tot=$("$HEAPTAP" top --show_bytes "$T/w.pb.gz" 2>"$T/top.err" | awk '/^Total:/ { print $2 }')
[ "$tot" = "$E3" ] || { cat "$T/top.err"; fail "heaptap top total '$tot', want $E3"; }

# ---- 2. the exporter ----
cat >"$T/heap.txt" <<EOF
heap_v2/524288
  t*: 5: 11264 [0: 0]
@ $A $M1 $MAIN
  t*: 3: 3072 [0: 0]
@ $B $M2 $MAIN
  t*: 2: 8192 [0: 0]

MAPPED_LIBRARIES:
$(printf '%08x-%08x r-xp %08x 08:01 1 %s' "$TSTART" "$TEND" "$TOFF" "$T/prog")
EOF
"$HEAPTAP" pprof "$T/prog" "$T/heap.txt" -o "$T/exp.pb.gz" || fail "heaptap pprof failed"
# jeprof's scaling of each record, truncated per record as the exporter does
want=$(awk 'BEGIN { R = 524288
	n[1] = 3; s[1] = 3072; n[2] = 2; s[2] = 8192
	for (i = 1; i <= 2; i++) { f = 1 / (1 - exp(-(s[i] / n[i]) / R)); o += int(n[i] * f); b += int(s[i] * f) }
	printf "%d %d\n", o, b }')
go tool pprof -raw -symbolize=none "$T/exp.pb.gz" >"$T/e.raw" 2>"$T/e.err" || { cat "$T/e.err"; fail "go tool pprof cannot read the export"; }
grep -q '^inuse_objects/count inuse_space/bytes$' "$T/e.raw" || fail "export sample types: $(grep -A1 Samples: "$T/e.raw")"
got=$(awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
	s && /^ *[0-9]+ +[0-9]+:/ { o += $1; v = $2; sub(":", "", v); b += v } END { printf "%d %d\n", o, b }' "$T/e.raw")
[ "$got" = "$want" ] || fail "export totals '$got', want '$want'"
echo "export: go tool pprof totals $got"

mv "$T/prog" "$T/prog.moved" # nothing left to symbolize from: names must come from the profile
go tool pprof -top -lines "$T/exp.pb.gz" >"$T/e.top" 2>"$T/e.err" || { cat "$T/e.err"; fail "go tool pprof -top failed"; }
cat "$T/e.top"
grep -Eq ' leaf_a [^ ]*prog\.c:3$' "$T/e.top" || fail "leaf_a prog.c:3 not shown"
grep -Eq ' leaf_b [^ ]*prog\.c:4$' "$T/e.top" || fail "leaf_b prog.c:4 not shown"
grep -Eq ' main [^ ]*prog\.c:6$' "$T/e.top" || fail "main prog.c:6 not shown"

# ---- 3. heaptap reads its own export back, symbols included ----
"$HEAPTAP" top --show_bytes "$T/exp.pb.gz" >"$T/back.top" 2>"$T/back.err" || { cat "$T/back.err"; fail "heaptap cannot read the export"; }
tot=$(awk '/^Total:/ { print $2 }' "$T/back.top")
[ "$tot" = "${want#* }" ] || fail "round trip total '$tot', want ${want#* }"
grep -q 'leaf_a' "$T/back.top" || fail "round trip lost the names: $(cat "$T/back.top")"
echo "PASS"
