#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sec_cli_memory.sh - tiny hostile profiles do not exhaust the CLI's memory or time (issue 14,
# item 6). Each input is a few KB to a few MB and is read by the plain CLI under a 2 GiB
# address-space limit (prlimit --as) and by the sanitizer build: it is either read with the
# right numbers or refused with exit 1 and a message naming the file, never an abort, a
# kill or a hang. The inputs (generated here with python3):
#   rep       heap_v2: one 20,000-frame stack, then 200,000 count lines (jeprof sums them; a
#             copy of the stack per line took gigabytes)
#   inline    pprof: one location with 2,000 inlined lines, samples 20,000 deep (1.4 KB
#             gzipped, 7.8 GB when every frame was expanded)
#   maps      heap_v2 with 100,000 stacks, 100,000 mappings and 100,000 heaptap mapping lines
#             (quadratic look-ups took minutes)
#   bomb      a gzipped heap_v2 that inflates to 200 MB, read with --max-memory=64M
. "$(dirname "$0")/lib/test.sh"
PLAIN=${HEAPTAP_PLAIN:-$ROOT/build/heaptap}
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }
command -v prlimit >/dev/null || { echo "prlimit is not installed"; exit 77; }

python3 - "$TMP" <<'PY'
import gzip, sys, zlib
d = sys.argv[1]
def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7f; v >>= 7
        if v: out.append(b | 0x80)
        else: out.append(b); return bytes(out)
def key(f, wt): return varint(f << 3 | wt)
def ld(f, b): return key(f, 2) + varint(len(b)) + b
def vi(f, v): return key(f, 0) + varint(v)
def packed(f, vals): return ld(f, b''.join(varint(v) for v in vals))

# rep: period 1, so 200,000 lines of 100 bytes are 20,000,000 bytes in all
rep = [b'heap_v2/1\n  t*: 200000: 20000000 [0: 0]\n',
       b'@ ' + b' '.join(b'0x%x' % (0x401000 + i) for i in range(20000)) + b'\n',
       b'  t*: 1: 100 [0: 0]\n' * 200000, b'MAPPED_LIBRARIES:\n']
open(d + '/rep.heap.gz', 'wb').write(gzip.compress(b''.join(rep), 9))

# inline: string table "", inuse_space, bytes, a long function name
prof = ld(1, vi(1, 1) + vi(2, 2)) + ld(5, vi(1, 1) + vi(2, 3))
prof += ld(4, vi(1, 1) + vi(3, 0x401000) + ld(4, vi(1, 1) + vi(2, 7)) * 2000)
for s in range(50):
    prof += ld(2, packed(1, [1] * 20000) + packed(2, [1000 + s]))
for s in [b'', b'inuse_space', b'bytes', b'f' * 1000]:
    prof += ld(6, s)
open(d + '/inline.pb.gz', 'wb').write(gzip.compress(prof, 9))

# maps
m = [b'heap_v2/1\n  t*: 100000: 10000000 [0: 0]\n']
for i in range(100000):
    m.append(b'@ 0x%x\n  t*: 1: 100 [0: 0]\n' % (0x7000000000 + i * 16))
m.append(b'MAPPED_LIBRARIES:\n')
for i in range(100000):
    m.append(b'%x-%x r-xp 00000000 00:00 0 /nonexistent/lib%d.so\n' % (0x10000000 + i * 0x2000, 0x10001000 + i * 0x2000, i))
for i in range(100000):
    m.append(b'# heaptap: mapping start=0x%x limit=0x%x path=/x%d build_id=ab\n' % (0x20000000 + i * 0x2000, 0x20001000 + i * 0x2000, i))
open(d + '/maps.heap.gz', 'wb').write(gzip.compress(b''.join(m), 6))

# bomb: 200 MB of distinct one-frame stacks, streamed through zlib
z = zlib.compressobj(6, zlib.DEFLATED, 31)
with open(d + '/bomb.heap.gz', 'wb') as f:
    f.write(z.compress(b'heap_v2/1\n  t*: 1: 1 [0: 0]\n'))
    n = 0
    while n < 200 << 20:
        chunk = b''.join(b'@ 0x%x\n  t*: 1: 1 [0: 0]\n' % (0x400000 + n + i) for i in range(40000))
        n += len(chunk)
        f.write(z.compress(chunk))
    f.write(z.flush())
PY
ls -l "$TMP"/*.gz | awk '{print $5, $NF}'

# run LABEL CMD...: runs CMD (120 s at most); sets rc and the files $TMP/out, $TMP/err.
run() {
	local label=$1; shift
	timeout -k 5 120 "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	echo "[$label] exit $rc: $(head -c 300 "$TMP/err")"
}
for bin in "$PLAIN" "$HEAPTAP"; do
	lim=(prlimit --as=$((2 << 30)) --)
	[ "$bin" = "$HEAPTAP" ] && lim=(env) # AddressSanitizer cannot run under an address-space limit
	tag=${bin##*/}
	run "$tag rep" "${lim[@]}" "$bin" top --show_bytes --no-symbolize "$TMP/rep.heap.gz"
	check "$tag rep: exit" 0 "$rc"
	check "$tag rep: total" "Total: 20000000 B" "$(head -n 1 "$TMP/out")"

	run "$tag inline" "${lim[@]}" "$bin" collapsed "$TMP/inline.pb.gz"
	check "$tag inline: exit" 1 "$rc"
	grep -q "^heaptap: $TMP/inline.pb.gz: .*expand to more than .* frames" "$TMP/err" ||
		{ echo "FAIL[$tag inline]: no message naming the file"; fail=1; }

	run "$tag maps" "${lim[@]}" "$bin" top --no-symbolize "$TMP/maps.heap.gz" "$TMP/maps.heap.gz"
	check "$tag maps: exit" 0 "$rc"
	check "$tag maps: total" "Total: 19.1 MB" "$(head -n 1 "$TMP/out")"
done

# The cap: exceeding it is exit 1 and a message naming the file and the limit, not an abort.
run "bomb capped" "$PLAIN" top --max-memory=64M "$TMP/bomb.heap.gz"
check "bomb: exit" 1 "$rc"
grep -q "^heaptap: $TMP/bomb.heap.gz: out of memory (the limit is 64 MiB .*--max-memory" "$TMP/err" ||
	{ echo "FAIL[bomb]: no message naming the file and the limit"; fail=1; }
run "bomb env" env HEAPTAP_MAX_MEMORY=64M "$PLAIN" top "$TMP/bomb.heap.gz"
check "bomb env: exit" 1 "$rc"
grep -q "^heaptap: $TMP/bomb.heap.gz: out of memory" "$TMP/err" || { echo "FAIL[bomb env]: message"; fail=1; }
run "bad size" env HEAPTAP_MAX_MEMORY=lots "$PLAIN" top "$TMP/rep.heap.gz"
check "bad size: exit" 2 "$rc"
run "bad option" "$PLAIN" top --max-memory=12Q "$TMP/rep.heap.gz"
check "bad option: exit" 2 "$rc"
# Under an outside limit the same holds: whatever runs out first, the message names the file.
run "bomb prlimit" prlimit --as=$((200 << 20)) -- "$PLAIN" top --max-memory=none "$TMP/bomb.heap.gz"
check "bomb prlimit: exit" 1 "$rc"
grep -q "^heaptap: $TMP/bomb.heap.gz: out of memory" "$TMP/err" || { echo "FAIL[bomb prlimit]: message"; fail=1; }
# The limit is heaptap's own: a program run under `heaptap run` does not inherit it.
run "child limit" env HEAPTAP_MAX_MEMORY=64M "$PLAIN" run -q -- sh -c 'ulimit -d'
grep -qx unlimited "$TMP/out" || { echo "FAIL[child limit]: PROG saw data limit '$(cat "$TMP/out")'"; fail=1; }
exit $fail
