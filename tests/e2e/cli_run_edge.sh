#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cli_run_edge.sh - `heaptap run` on the programs a new user tries first, beyond the demo: a
# statically linked program (refused with a clear message, not run), a program whose memory is
# all freed (says "none" and shows where it allocated, exact with lg_prof_sample:0), exit
# statuses (a code, a signal, not found 127, not executable 126), arguments with spaces passed
# intact, and a C++ program whose allocations happen inside libstdc++ (the site row names the
# program's own frame that led there). Every number is exact: lg_prof_sample:0 records all.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
HEAPTAP=${HEAPTAP:-$ROOT/build/heaptap-asan}
HEAPTAP_LIB=${HEAPTAP_LIB:-$ROOT/build/libheaptap.so}
[ -f "$HEAPTAP_LIB" ] || { echo "FAIL: $HEAPTAP_LIB is not built"; exit 1; }
export HEAPTAP_LIB
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

cat >"$TMP/freed.c" <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
__attribute__((noinline)) char *make_buf(size_t n)
{
	char *p = malloc(n);
	memset(p, 1, n);
	return p;
}
int main(int argc, char **argv)
{
	char line[256]; /* no stdio buffer: it would stay live */
	for (int i = 1; i < argc; i++)
		write(1, line, (size_t)snprintf(line, sizeof(line), "arg[%s]\n", argv[i]));
	long s = 0;
	for (int i = 0; i < 1000; i++) {
		char *p = make_buf(100000);
		s += p[i];
		free(p);
	}
	write(1, line, (size_t)snprintf(line, sizeof(line), "sum %ld\n", s));
	if (argc > 1 && strcmp(argv[1], "kill") == 0)
		raise(SIGTERM);
	return argc > 1 && strcmp(argv[1], "three") == 0 ? 3 : 0;
}
EOF
cat >"$TMP/cxx.cc" <<'EOF'
#include <cstdio>
#include <map>
#include <string>
std::map<int, std::string> *build_index(int n)
{
	auto *m = new std::map<int, std::string>;
	for (int i = 0; i < n; i++)
		(*m)[i] = std::string(100, 'x');
	return m;
}
int main()
{
	auto *m = build_index(1000);
	std::printf("%zu\n", m->size());
	return 0;
}
EOF
cc -O1 -g -fno-omit-frame-pointer -o "$TMP/freed" "$TMP/freed.c" || { echo "FAIL: cannot compile freed.c"; exit 1; }
g++ -O1 -g -fno-omit-frame-pointer -o "$TMP/cxx" "$TMP/cxx.cc" || { echo "FAIL: cannot compile cxx.cc"; exit 1; }
run() { (cd "$TMP" && "$HEAPTAP" run --out "$TMP/out" --conf lg_prof_sample:0 "$@") >"$TMP/o" 2>"$TMP/e"; }

# 1. All memory freed: 1000 x 100000 B allocated by make_buf, nothing live.
run -- ./freed
rc=$?
[ $rc = 0 ] || bad "freed: exit $rc: $(cat "$TMP/e")"
grep -q '^heaptap: live heap of ./freed at exit: none (every sampled allocation was freed)$' "$TMP/o" ||
	bad "freed: no 'none' line"
grep -q '^heaptap: allocated by ./freed while it ran: 95.4 MiB in 1000 objects$' "$TMP/o" ||
	bad "freed: allocated total is not 95.4 MiB in 1000 objects"
line=$(grep -n 'char \*p = malloc(n)' "$TMP/freed.c" | cut -d: -f1)
grep -qE "^ +95\.4 MiB 100\.0% +1000  make_buf .*freed\.c:$line$" "$TMP/o" ||
	bad "freed: no allocating-site row for make_buf at freed.c:$line"
# A program with nothing sampled says so (coreutils true calls malloc 0 times: checked with
# lg_prof_sample:0, which records no allocation at all, so no sample can happen).
(cd "$TMP" && "$HEAPTAP" run --out "$TMP/out" -- true) >"$TMP/o2" 2>"$TMP/e2" || bad "true: exit $?"
grep -q '^heaptap: live heap of true at exit: nothing sampled (one sample per 512 KiB allocated on average; --conf lg_prof_sample:0 records every allocation)$' "$TMP/o2" ||
	bad "true: no 'nothing sampled' line: $(cat "$TMP/o2")"
[ $fail = 0 ] && echo "ok: all-freed program: none live, 95.4 MiB in 1000 objects allocated at make_buf; true: nothing sampled"
cat "$TMP/o"

# 2. Exit statuses and arguments.
run -- ./freed three "a  b" "" 'c d'
rc=$?
[ $rc = 3 ] || bad "exit status 3 came back as $rc"
[ "$(grep '^arg\[' "$TMP/o")" = "$(printf 'arg[three]\narg[a  b]\narg[]\narg[c d]')" ] ||
	bad "arguments were not passed intact: $(grep '^arg' "$TMP/o" | tr '\n' '|')"
run -- ./freed kill
rc=$?
[ $rc = 143 ] || bad "SIGTERM gave $rc, not 143"
run -- ./no-such-program
rc=$?
[ $rc = 127 ] || bad "a missing program gave $rc, not 127"
grep -q '^heaptap: run: ./no-such-program: No such file or directory$' "$TMP/e" || bad "missing program: $(cat "$TMP/e")"
run -- ./freed.c
rc=$?
[ $rc = 126 ] || bad "a non-executable file gave $rc, not 126"
[ $fail = 0 ] && echo "ok: statuses 3, 143, 127, 126; arguments with spaces and empty ones intact"

# 3. A statically linked program: refused before running, exit 1, says why.
if cc -static -O1 -o "$TMP/static" "$TMP/freed.c" 2>/dev/null; then
	run -- ./static three
	rc=$?
	[ $rc = 1 ] || bad "static: exit $rc, not 1"
	grep -q '^heaptap: run: ./static: statically linked, so LD_PRELOAD cannot load the collector' "$TMP/e" ||
		bad "static: message is '$(cat "$TMP/e")'"
	grep -q 'sum' "$TMP/o" && bad "static: the program was run anyway"
	[ $fail = 0 ] && echo "ok: static program refused: $(cat "$TMP/e")"
else
	echo "note: no static libc (libc6-dev's libc.a), static case not checked"
fi

# 3b. A crash (SIGSEGV) and an _exit(0) skip the final dump: run says why, reports the last
#     periodic dump when there is one, and passes the status on (1 for _exit(0): no profile).
cat >"$TMP/crash.c" <<'EOF2'
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
__attribute__((noinline)) char *grab(size_t n)
{
	char *p = malloc(n);
	memset(p, 1, n);
	return p;
}
/* 1 when dir holds a periodic dump (a name with ".t<N>.heap") */
static int timed_dump(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;
	while (d && !found && (e = readdir(d))) {
		const char *t = strstr(e->d_name, ".t");
		size_t n = strlen(e->d_name);
		found = t && n > 5 && strcmp(e->d_name + n - 5, ".heap") == 0;
	}
	if (d)
		closedir(d);
	return found;
}
int main(int argc, char **argv)
{
	char *p = grab(4 << 20);
	if (argc > 1)
		_exit(0);
	/* periodic dumps every 100 ms: crash once one is written (at most 10 s) */
	for (int i = 0; i < 1000 && !timed_dump("out"); i++)
		usleep(10000);
	*(volatile int *)0 = p[3];
	return 0;
}
EOF2
cc -O1 -g -fno-omit-frame-pointer -o "$TMP/crash" "$TMP/crash.c" || { echo "FAIL: cannot compile crash.c"; exit 1; }
run --conf prof_time_interval:100ms -- ./crash
rc=$?
[ $rc = 139 ] || bad "crash: exit $rc, not 139"
grep -q '^heaptap: run: ./crash was killed by signal 11 (Segmentation fault) before its final dump$' "$TMP/e" ||
	bad "crash: no signal message: $(cat "$TMP/e")"
grep -qE '^heaptap: run: reporting the last dump it wrote: .*/heaptap\.[0-9]+\.[0-9]+\.t[0-9]+\.heap$' "$TMP/e" ||
	bad "crash: the last periodic dump is not named"
grep -q '^heaptap: live heap of ./crash in its last dump: 4.0 MiB in 1 object$' "$TMP/o" ||
	bad "crash: no 4.0 MiB live line: $(cat "$TMP/o")"
grep -qE '^ +4\.0 MiB 100\.0% +1  grab .*crash\.c:[0-9]+$' "$TMP/o" || bad "crash: no grab site row"
run -- ./crash x
rc=$?
[ $rc = 1 ] || bad "_exit(0) without a dump: exit $rc, not 1"
grep -q '^heaptap: run: ./crash exited with status 0 without a final dump' "$TMP/e" ||
	bad "_exit: no message: $(cat "$TMP/e")"
[ $fail = 0 ] && echo "ok: crash (139, last periodic dump reported) and _exit (1, said why)"

# 3c. A server stopped with Ctrl-C (SIGINT) leaves no final dump; run keeps one periodic dump
#     (every 5 s) by default and reports it, with the status 130.
cat >"$TMP/server.c" <<'EOF2'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
__attribute__((noinline)) char *grab(size_t n)
{
	char *p = malloc(n);
	memset(p, 1, n);
	return p;
}
int main(int argc, char **argv)
{
	char *p = grab(8 << 20);
	FILE *f = fopen(argv[1], "w");
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (;;) {
		sleep(1);
		p[0]++;
	}
}
EOF2
cc -O1 -g -fno-omit-frame-pointer -o "$TMP/server" "$TMP/server.c" || { echo "FAIL: cannot compile server.c"; exit 1; }
run -- ./server "$TMP/server.pid" &
runpid=$!
for i in $(seq 1 100); do [ -s "$TMP/server.pid" ] && break; sleep 0.1; done
spid=$(cat "$TMP/server.pid" 2>/dev/null)
# one periodic dump of the server (every 5 s): waited for, not guessed (a stalled runner
# missed it by 1 s)
for i in $(seq 1 300); do
	ls "$TMP/out" 2>/dev/null | grep -qE "^heaptap\.$spid\.[0-9]+\.t[0-9]+\.heap\$" && break
	sleep 0.1
done
[ -n "$spid" ] && kill -INT "$spid"
wait $runpid
rc=$?
[ $rc = 130 ] || bad "Ctrl-C: exit $rc, not 130"
grep -q '^heaptap: run: ./server was killed by signal 2 (Interrupt) before its final dump$' "$TMP/e" ||
	bad "Ctrl-C: no signal message: $(cat "$TMP/e")"
grep -q '^heaptap: live heap of ./server in its last dump: 8.0 MiB in 1 object$' "$TMP/o" ||
	bad "Ctrl-C: the periodic dump is not reported: $(cat "$TMP/o")"
[ $fail = 0 ] && echo "ok: Ctrl-C on a server: 130, its last periodic dump reported (8.0 MiB at grab)"

# 4. C++: the 100-byte strings are allocated inside libstdc++ (_M_construct has no line info);
#    the row must say which of the program's frames led there.
run -- ./cxx
rc=$?
cat "$TMP/o"
[ $rc = 0 ] || bad "cxx: exit $rc: $(cat "$TMP/e")"
bline=$(grep -n 'std::string(100' "$TMP/cxx.cc" | cut -d: -f1)
# The two 1000-object rows (strings, map nodes) are allocated in library code; each must be
# followed by a "from build_index ... cxx.cc:LINE" line.
rows=$(grep -A1 -E '^ +[0-9.]+ KiB +[0-9.]+% +1000  ' "$TMP/o")
[ "$(echo "$rows" | grep -cE '^ +[0-9.]+ KiB +[0-9.]+% +1000  ')" = 2 ] || bad "cxx: not two 1000-object rows"
[ "$(echo "$rows" | grep -cE "^ +from build_index.* .*cxx\.cc:$bline\$")" = 2 ] ||
	bad "cxx: library sites lack a 'from build_index ... cxx.cc:$bline' line"
grep -qE '0x[0-9a-f]{16}|\?\?:' "$TMP/o" && bad "cxx: a row shows a bare address or ??: instead of naming the library"
grep -qE '^ +[0-9.]+ KiB +[0-9.]+% +1000  std::__cxx11::basic_string::_M_construct \(libstdc\+\+\.so[.0-9]*\)$' "$TMP/o" ||
	bad "cxx: the string site does not name libstdc++"
[ $fail = 0 ] && echo "ok: C++ library sites name the program's frame (build_index cxx.cc:$bline)"
# 4b. On jemalloc (preloaded), operator new is jemalloc's: C++ allocations never reach heaptap's
#     malloc. The report says so for a C++ program, and not for a C one or without jemalloc.
grep -q 'heaptap: note: ' "$TMP/o" && bad "cxx without jemalloc: a jemalloc note"
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
if [ -f "$JE" ]; then
	# jemalloc goes after the collector in the program's LD_PRELOAD only (heaptap itself, an ASan
	# build, must not run on it); sh's exec keeps the pid, so the dump is the program's.
	run -- sh -c 'LD_PRELOAD="$LD_PRELOAD:'"$JE"'" exec ./cxx'
	grep -q "^heaptap: note: sh runs on jemalloc, whose operator new bypasses the malloc heaptap samples" "$TMP/o" ||
		bad "cxx on jemalloc: no note: $(cat "$TMP/o" "$TMP/e")"
	run -- sh -c 'LD_PRELOAD="$LD_PRELOAD:'"$JE"'" exec ./freed'
	grep -q '^heaptap: allocated by sh while it ran: 95\.[45] MiB' "$TMP/o" || bad "C program on jemalloc: not profiled: $(cat "$TMP/o")"
	grep -q 'heaptap: note: ' "$TMP/o" && bad "C program on jemalloc: a C++ note"
	[ $fail = 0 ] && echo "ok: the jemalloc operator-new note appears for C++ on jemalloc only"
else
	echo "note: no $JE, jemalloc case not checked"
fi

# 4c. Rust: allocations sit in the standard library (/rustc/<hash>/library/alloc/...); the row
#     names the program's own function that led there.
RUSTC=$(PATH="$HOME/.cargo/bin:$PATH" command -v rustc)
if [ -n "$RUSTC" ]; then
	cat >"$TMP/r.rs" <<'EOF2'
#[inline(never)]
fn build(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("item-{:08}-{}", i, "x".repeat(100))).collect()
}
fn main() {
    let leak = Box::leak(Box::new(build(20000)));
    println!("{}", leak.len());
}
EOF2
	"$RUSTC" -g -O -C force-frame-pointers=yes -o "$TMP/rprog" "$TMP/r.rs" 2>/dev/null || bad "rustc failed"
	run -- ./rprog
	rline=$(grep -n 'format!' "$TMP/r.rs" | cut -d: -f1)
	grep -A1 -E '^ +2\.2 MiB .* 20000  ' "$TMP/o" | grep -qE "^ +from r::build.* .*r\.rs:$rline\$" ||
		bad "rust: the 20000 strings are not traced to r.rs:$rline: $(cat "$TMP/o")"
	[ $fail = 0 ] && echo "ok: Rust std allocation sites name r::build at r.rs:$rline"
else
	echo "note: no rustc, Rust case not checked"
fi

# 5. PROG is a shell that runs the real program: the report is the child's (the process that
#    held the most live memory), and the shell's own dump is mentioned.
run -- bash -c './cxx; true'
rc=$?
[ $rc = 0 ] || bad "bash -c: exit $rc: $(cat "$TMP/e")"
grep -qE '^heaptap: run: bash started 1 process that left dumps; reporting the one that held the most live memory, \./cxx \(pid [0-9]+\)$' "$TMP/o" ||
	bad "bash -c: the child is not reported: $(head -5 "$TMP/o")"
grep -q '^heaptap: live heap of ./cxx at exit: 244.0 KiB in 2003 objects$' "$TMP/o" || bad "bash -c: not the child's numbers"
grep -q '^  final dumps of 1 other process of this run in ' "$TMP/o" || bad "bash -c: the shell's own dump is not mentioned"
[ $fail = 0 ] && echo "ok: bash -c ./cxx reports ./cxx"
exit $fail
