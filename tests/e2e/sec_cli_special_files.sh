#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sec_cli_special_files.sh - only regular files are read (issue 14, item 6): a FIFO given as
# the profile, as the binary or named as a library inside a profile, and /dev/zero as the
# profile, are refused at once with a message naming them (exit 1), or skipped with a warning
# (a library), instead of waiting forever for a writer or reading until memory runs out.
# Standard input ("-") may still be a pipe, but not a device.
. "$(dirname "$0")/lib/test.sh"
. "$(dirname "$0")/lib/cli_synth.sh"
cli_synth "$TMP"
mkfifo "$TMP/fifo" || { echo "mkfifo failed"; exit 77; }

# expect LABEL CODE STDERR-REGEX CMD...: CMD must end within 30 s.
expect() {
	local label=$1 code=$2 re=$3; shift 3
	timeout -k 5 30 "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ $rc != "$code" ]; then
		echo "FAIL[$label]: exit $rc, expected $code ($([ $rc = 124 ] && echo "hung"); stderr: $(head -c 300 "$TMP/err")"
		fail=1; return
	fi
	if ! grep -qE -- "$re" "$TMP/err"; then
		echo "FAIL[$label]: stderr does not match /$re/: $(head -c 300 "$TMP/err")"; fail=1; return
	fi
	echo "ok[$label]"
}

for cmd in top collapsed; do
	expect "$cmd fifo profile" 1 "^heaptap: $TMP/fifo: not a regular file \(a FIFO\)$" "$HEAPTAP" $cmd "$TMP/fifo"
	expect "$cmd dev-zero profile" 1 "^heaptap: /dev/zero: not a regular file \(a character device\)$" "$HEAPTAP" $cmd /dev/zero
	expect "$cmd fifo base" 1 "^heaptap: $TMP/fifo: not a regular file \(a FIFO\)$" "$HEAPTAP" $cmd --base "$TMP/fifo" "$TMP/cli_new.raw"
done
# A FIFO where the binary goes: it is not an ELF file, so it is taken for a profile and refused.
expect "fifo binary" 1 "^heaptap: $TMP/fifo: not a regular file \(a FIFO\)$" "$HEAPTAP" top "$TMP/fifo" "$TMP/cli_new.raw"
expect "stdin device" 1 "standard input is a character device" "$HEAPTAP" top - </dev/zero
# A pipe on standard input is still read.
check "stdin pipe" "Total: 1053624 B" "$(cat "$TMP/cli_new.raw" | timeout 30 "$HEAPTAP" top --show_bytes - 2>/dev/null | head -n 1)"

# A FIFO named as the program's file inside the profile: a warning, the frames stay addresses.
sed "s|/nonexistent/app|$TMP/fifo|" "$TMP/cli_new.raw" | grep -v '^binary=' | sed -n '/^heap_v2/,$p' >"$TMP/lib.heap"
expect "fifo library" 0 "^heaptap: warning: $TMP/fifo: not a regular file \(a FIFO\); its frames stay unsymbolized$" \
	"$HEAPTAP" top "$TMP/lib.heap"
grep -q '^ .*fifo+0x1000$' "$TMP/out" || { echo "FAIL[fifo library]: no FILE+0xOFFSET frame: $(cat "$TMP/out")"; fail=1; }
# The same FIFO as a separate debug file's place (HEAPTAP_DEBUG_ROOT tree): skipped quietly.
mkdir -p "$TMP/dbg/.build-id/ab"
mkfifo "$TMP/dbg/.build-id/ab/cdef.debug"
printf '# heaptap: mapping start=0x1000 limit=0x4000 path=%s build_id=abcdef\n' "$TMP/nolib" >>"$TMP/lib.heap"
expect "fifo debug file" 0 "" env HEAPTAP_DEBUG_ROOT="$TMP/dbg" "$HEAPTAP" top "$TMP/lib.heap"
exit $fail
