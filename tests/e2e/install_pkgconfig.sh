#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# install_pkgconfig.sh - `make install PREFIX=... [DESTDIR=...]` puts the collector library and
# archive, the CLI, include/heaptap.h, heaptap.pc and the docs where they belong, and a tiny
# program built with `pkg-config --cflags --libs heaptap` alone (no path into the source tree)
# links, runs, writes a profile through the C API, and the installed CLI reads it.
set -u
. "$(dirname "$0")/lib/common.sh"
ht_init
command -v pkg-config >/dev/null || ht_skip "pkg-config is not installed (scripts/deps.sh build)"
command -v cc >/dev/null || ht_skip "no C compiler (cc)"
prefix=$TMP/prefix

# a staged install (DESTDIR) lays the same tree under the stage, with the final paths inside
make -s -C "$ROOT" install PREFIX=/opt/heaptap DESTDIR="$TMP/stage" >"$TMP/stage.log" 2>&1 ||
	{ cat "$TMP/stage.log"; ht_fail "make install DESTDIR failed"; }
for f in bin/heaptap lib/libheaptap.so lib/libheaptap.a include/heaptap.h lib/pkgconfig/heaptap.pc \
	share/doc/heaptap/README.md share/doc/heaptap/OPTIONS.md; do
	[ -f "$TMP/stage/opt/heaptap/$f" ] || ht_fail "DESTDIR install lacks $f"
done
grep -qx 'libdir=/opt/heaptap/lib' "$TMP/stage/opt/heaptap/lib/pkgconfig/heaptap.pc" ||
	ht_fail "the staged heaptap.pc does not name the final libdir"

make -s -C "$ROOT" install PREFIX="$prefix" >"$TMP/install.log" 2>&1 ||
	{ cat "$TMP/install.log"; ht_fail "make install failed"; }
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
ver=$(pkg-config --modversion heaptap) || ht_fail "pkg-config does not find heaptap"
want=$(sed -n 's/^#define HEAPTAP_VERSION "\(.*\)"/\1/p' "$ROOT/include/heaptap.h")
[ "$ver" = "$want" ] || ht_fail "heaptap.pc says version $ver, heaptap.h $want"
flags=$(pkg-config --cflags --libs heaptap)
echo "pkg-config --cflags --libs heaptap: $flags"
[[ $flags == *"-I$prefix/include"* && $flags == *"-L$prefix/lib"* && $flags == *-lheaptap* ]] ||
	ht_fail "unexpected flags: $flags"

cat >"$TMP/tiny.c" <<'C'
#include <heaptap.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	void *keep[100];
	for (int i = 0; i < 100; i++)
		keep[i] = malloc(10000);
	int rc = heaptap_dump(argv[1]);
	printf("heaptap %s, active %d, dump %d\n", HEAPTAP_VERSION, heaptap_active(), rc);
	for (int i = 0; i < 100; i++)
		free(keep[i]);
	return rc != 0;
}
C
# shellcheck disable=SC2086
cc -O1 -g -o "$TMP/tiny" "$TMP/tiny.c" $flags || ht_fail "cannot build with pkg-config's flags"
readelf -d "$TMP/tiny" | grep -q 'NEEDED.*libheaptap.so' || ht_fail "tiny does not link libheaptap.so"
out=$(cd "$TMP" && LD_LIBRARY_PATH="$prefix/lib" HEAPTAP_CONF=lg_prof_sample:0,prof_final:false "$TMP/tiny" "$TMP/tiny.heap") ||
	ht_fail "tiny failed: $out"
echo "$out"
[ "$out" = "heaptap $want, active 1, dump 0" ] || ht_fail "unexpected output: $out"
head -1 "$TMP/tiny.heap" | grep -q '^heap_v2/' || ht_fail "the dump is not heap_v2"
top=$("$prefix/bin/heaptap" top --show_bytes "$TMP/tiny" "$TMP/tiny.heap" 2>&1) || { echo "$top"; ht_fail "the installed CLI failed"; }
echo "$top" | head -4
echo "$top" | grep -Eq '^ *1000000 .* main$' || ht_fail "main does not hold the 100 x 10000 bytes"
echo ok
