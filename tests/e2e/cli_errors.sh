#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_errors.sh - the CLI's error conventions: a missing file, a corrupt profile (text: file and
# line; binary: file and byte offset) exit 1 with "heaptap: <file>...: <why>"; a bad option,
# bad value, bad regex, missing profile or unknown command exit 2 with a hint; --help works
# (exit 0, usage on stdout) for every command `heaptap --help` lists, and nothing is printed
# on stdout on failure.
. "$(dirname "$0")/lib/test.sh"
. "$(dirname "$0")/lib/cli_synth.sh"
cli_synth "$TMP"
# expect LABEL CODE STDERR-REGEX CMD...
expect() {
	local label=$1 code=$2 re=$3; shift 3
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ $rc != "$code" ]; then
		echo "FAIL[$label]: exit $rc, expected $code; stderr: $(cat "$TMP/err")"; fail=1; return
	fi
	if ! grep -qE -- "$re" "$TMP/err"; then
		echo "FAIL[$label]: stderr does not match /$re/: $(cat "$TMP/err")"; fail=1; return
	fi
	if [ "$code" != 0 ] && [ -s "$TMP/out" ]; then
		echo "FAIL[$label]: printed on stdout while failing: $(head -c 200 "$TMP/out")"; fail=1; return
	fi
	echo "ok[$label]"
}

printf 'heap_v2/1\n  t*: 1: 100 [0: 0]\n@ 0xzz 0x1\n  t*: 1: 100 [0: 0]\n' >"$TMP/bad_addr.heap"
printf 'heap_v2/1\n  t*: 1: 100 [0: 0]\n@ 0x10 0x1\n  t*: 1: 1' >"$TMP/truncated.heap"
printf '\x08\x96\x01\x00\x00\xff\xff' >"$TMP/bad.pb"

for cmd in top diff collapsed callgraph; do
	extra=(); [ $cmd = diff ] && extra=(--base "$TMP/cli_old.raw")
	expect "$cmd-missing" 1 "^heaptap: $TMP/nope.heap: No such file or directory\$" "$HEAPTAP" $cmd "${extra[@]}" "$TMP/nope.heap"
	expect "$cmd-corrupt-text" 1 "^heaptap: .*bad_addr.heap:3: .*0xzz" "$HEAPTAP" $cmd "${extra[@]}" "$TMP/bad_addr.heap"
	expect "$cmd-bad-option" 2 "^heaptap: $cmd: unknown option '--frobnicate'" "$HEAPTAP" $cmd --frobnicate "$TMP/cli_new.raw"
done
expect truncated 1 "truncated.heap:4: " "$HEAPTAP" top "$TMP/truncated.heap"
expect corrupt-binary 1 "^heaptap: .*bad.pb.*(byte|offset)" "$HEAPTAP" top "$TMP/bad.pb"
expect missing-base 1 "^heaptap: $TMP/nobase: No such file or directory\$" "$HEAPTAP" top --base "$TMP/nobase" "$TMP/cli_new.raw"
expect bad-regex 2 "^heaptap: top: --focus: bad regular expression" "$HEAPTAP" top --focus='(' "$TMP/cli_new.raw"
expect bad-nodecount 2 "^heaptap: top: --nodecount: expected a non-negative integer" "$HEAPTAP" top --nodecount=x "$TMP/cli_new.raw"
expect bad-sample-index 2 "^heaptap: top: -sample_index: unknown sample type" "$HEAPTAP" top -sample_index=cpu "$TMP/cli_new.raw"
expect two-values 2 "only one of" "$HEAPTAP" top --inuse_objects --alloc_space "$TMP/cli_new.raw"
expect no-value 2 "needs a value" "$HEAPTAP" top "$TMP/cli_new.raw" --focus
expect no-profile 2 "^heaptap: top: no profile given" "$HEAPTAP" top
expect two-binaries 2 "two binaries" "$HEAPTAP" top /bin/ls /bin/cat "$TMP/cli_new.raw"
expect unknown-cmd 2 "^heaptap: unknown command 'frob'" "$HEAPTAP" frob
expect no-cmd 2 "usage: heaptap" "$HEAPTAP"
expect help-unknown 2 "unknown command 'frob'" "$HEAPTAP" help frob
expect merge-no-output 2 "no output file" "$HEAPTAP" merge "$TMP/cli_new.raw"

# Option forms: --opt=V, --opt V and -opt=V give the same report; a binary may come anywhere.
a=$("$HEAPTAP" top --focus=leak "$TMP/cli_new.raw")
b=$("$HEAPTAP" top --focus leak "$TMP/cli_new.raw")
c=$("$HEAPTAP" top "$TMP/cli_new.raw" -focus=leak)
d=$("$HEAPTAP" top -sample_index=inuse_space "$TMP/cli_new.raw" --focus leak)
if [ -z "$a" ] || [ "$a" != "$b" ] || [ "$a" != "$c" ] || [ "$a" != "$d" ]; then
	echo "FAIL: option forms differ: '$a' / '$b' / '$c' / '$d'"; fail=1
else
	echo "ok[option-forms]"
fi
[ "$("$HEAPTAP" top -sample_index=2 "$TMP/cli_new.raw")" = "$("$HEAPTAP" top --inuse_objects "$TMP/cli_new.raw")" ] ||
	{ echo "FAIL: -sample_index=2 (Go order) is not inuse_objects"; fail=1; }

# --help on every listed command, `help CMD`, --version.
cmds=$("$HEAPTAP" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
[ -n "$cmds" ] || { echo "FAIL: heaptap --help lists no commands"; fail=1; }
for cmd in $cmds; do
	out=$("$HEAPTAP" $cmd --help 2>&1); rc=$?
	if [ $rc != 0 ] || ! echo "$out" | head -n 1 | grep -q "usage: heaptap $cmd"; then
		echo "FAIL[$cmd --help]: exit $rc, first line '$(echo "$out" | head -n 1)'"; fail=1
	fi
	[ "$("$HEAPTAP" help $cmd 2>&1)" = "$out" ] || { echo "FAIL[help $cmd] differs from $cmd --help"; fail=1; }
done
echo "ok[--help]: $(echo $cmds)"
"$HEAPTAP" --version | grep -qE '^heaptap [0-9]+\.[0-9]+\.[0-9]+$' || { echo "FAIL: --version"; fail=1; }
exit $fail
