#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sec_cli_elf.sh - ELF files the symbolizer cannot trust are reported, not silently skipped
# (issue 14, items 7 and 9): a truncated or corrupt ELF given as the binary, a file whose
# build ID differs from the profile's (once per file, however many profiles a command
# symbolizes), and a debug section that claims to decompress to gigabytes (its DWARF is not
# read; names come from the symbol table). The report still comes out (exit 0).
. "$(dirname "$0")/lib/test.sh"
command -v gcc >/dev/null || { echo "gcc is not installed"; exit 77; }
command -v objcopy >/dev/null || { echo "objcopy is not installed"; exit 77; }
cat >"$TMP/prog.c" <<'EOT'
#include <stdlib.h>
__attribute__((noinline)) void *alloc_site(size_t n) { return malloc(n); }
int main(void) { return alloc_site(10) == 0; }
EOT
gcc -g -O1 -no-pie -fno-pie -o "$TMP/prog" "$TMP/prog.c" || { echo "cannot build"; exit 77; }
bid=$(readelf -n "$TMP/prog" | awk '/Build ID/ {print $3}')
addr=$(nm "$TMP/prog" | awk '$3 == "alloc_site" {print $1}')
# profile PATH: a heap_v2 profile with one stack in alloc_site of the file at PATH (built as
# $TMP/prog, build ID $bid).
profile() {
	printf 'heap_v2/1\n  t*: 1: 100 [0: 0]\n@ 0x%x\n  t*: 1: 100 [0: 0]\nMAPPED_LIBRARIES:\n' $((0x$addr + 5))
	printf '00400000-00500000 r-xp 00000000 00:00 0 %s\n' "$1"
	printf '# heaptap: mapping start=0x400000 limit=0x500000 path=%s build_id=%s\n' "$1" "$bid"
}
profile "$TMP/prog" >"$TMP/p.heap"
hex=$(printf 'prog+0x%x' $((0x$addr + 5 - 0x400000)))  # unnamed frames print as FILE+0xOFFSET
check "good binary" "alloc_site" "$("$HEAPTAP" top "$TMP/prog" "$TMP/p.heap" | awk 'NR == 2 {print $NF}')"

# run LABEL CMD...: sets rc; stdout in $TMP/out, stderr in $TMP/err.
run() { local l=$1; shift; "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; echo "[$l] exit $rc"; sed 's/^/  | /' "$TMP/err"; }

head -c 3000 "$TMP/prog" >"$TMP/trunc"
run truncated "$HEAPTAP" top "$TMP/trunc" "$TMP/p.heap"
check "truncated: exit" 0 "$rc"
grep -q "^heaptap: warning: $TMP/trunc: corrupt ELF file: .*truncated" "$TMP/err" || { echo "FAIL[truncated]: no warning"; fail=1; }
check "truncated: frame" "$hex" "$(awk 'NR == 2 {print $NF}' "$TMP/out")"

head -c 200 "$TMP/prog" >"$TMP/headonly"
run header-only "$HEAPTAP" top "$TMP/headonly" "$TMP/p.heap"
check "header-only: exit" 0 "$rc"
grep -q "^heaptap: warning: $TMP/headonly: corrupt ELF file" "$TMP/err" || { echo "FAIL[header-only]: no warning"; fail=1; }

printf '\177ELF this is not an object file at all, only its magic\n' >"$TMP/magic"
run magic-only "$HEAPTAP" top "$TMP/magic" "$TMP/p.heap"
check "magic-only: exit" 0 "$rc"
grep -q "^heaptap: warning: $TMP/magic: .*ELF" "$TMP/err" || { echo "FAIL[magic-only]: no warning"; fail=1; }

# Another build of the program where the profile's is: a mismatch warning, once per file,
# although diff symbolizes the old and the new profile separately.
mkdir -p "$TMP/other"
sed 's/10/20/' "$TMP/prog.c" >"$TMP/other/prog.c"
gcc -g -O1 -no-pie -fno-pie -o "$TMP/other/prog" "$TMP/other/prog.c"
profile "$TMP/other/prog" >"$TMP/q.heap"
run mismatch "$HEAPTAP" diff --base "$TMP/q.heap" "$TMP/q.heap"
check "mismatch: exit" 0 "$rc"
check "mismatch: warnings" 1 "$(grep -c "^heaptap: warning: $TMP/other/prog: build ID mismatch (profile $bid, file .* has " "$TMP/err")"
run mismatch-binary "$HEAPTAP" collapsed --negative=separate --base "$TMP/p.heap" "$TMP/other/prog" "$TMP/p.heap"
check "mismatch-binary: warnings" 1 "$(grep -c "^heaptap: warning: $TMP/other/prog: build ID mismatch" "$TMP/err")"

# A debug section that claims 3 GiB: not inflated, a warning; the symbol table still names the frame.
objcopy --compress-debug-sections=zlib "$TMP/prog" "$TMP/bomb"
python3 - "$TMP/bomb" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
shoff, = struct.unpack_from('<Q', b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
sh = lambda i: struct.unpack_from('<IIQQQQ', b, shoff + i * shentsize)
names = sh(shstrndx)[4]
for i in range(shnum):
    name, typ, flags, addr, off, size = sh(i)
    if b[names + name:b.index(0, names + name)] == b'.debug_info':
        assert flags & 0x800, 'not compressed'
        struct.pack_into('<Q', b, off + 8, 3 << 30)  # Elf64_Chdr.ch_size
open(sys.argv[1], 'wb').write(b)
PY
bomb_bid=$(readelf -n "$TMP/bomb" | awk '/Build ID/ {print $3}')
profile "$TMP/bomb" | sed "s/$bid/$bomb_bid/" >"$TMP/b.heap"
run inflate "$HEAPTAP" top "$TMP/b.heap"
check "inflate: exit" 0 "$rc"
grep -q "^heaptap: warning: $TMP/bomb: section .debug_info would decompress to 3.0 GiB from .*its DWARF is not read" "$TMP/err" ||
	{ echo "FAIL[inflate]: no warning"; fail=1; }
check "inflate: frame" "alloc_site" "$(awk 'NR == 2 {print $NF}' "$TMP/out")"
exit $fail
