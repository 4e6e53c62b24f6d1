#!/bin/bash
# tests/golden/regen.sh - regenerates the golden heap profiles made by the real tools (jemalloc's
# profiler, gperftools' HEAPPROFILE, tcmalloc's heap sample and growth stacks, Go's debug=1 heap
# text) and, for EVERY tests/golden/*.heap (the hand-written synthetic ones included), the
# <name>.expect file holding the totals the real jeprof prints (`jeprof --text --show_bytes`,
# the four value selectors). tests/unit/profile_golden.c checks the readers against them.
# Usage: tests/golden/regen.sh [--expect-only]   (needs gcc, g++, go, jemalloc, tcmalloc, jeprof)
set -eu
cd "$(dirname "$0")"
golden=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PATH="/usr/lib/go/bin:$PATH"
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2

if [ "${1:-}" != "--expect-only" ]; then
	# --- a C program with known allocation sites, for jemalloc and gperftools' heap profiler ---
	cat >"$tmp/alloc.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) void *leaf_a(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
__attribute__((noinline)) void *leaf_b(size_t n) { return calloc(1, n); }
static void *keep[20000];
int main(void)
{
	int k = 0;
	for (int i = 0; i < 10000; i++) {
		void *p = leaf_a(100 + (size_t)(i % 7) * 50);
		if (i % 2) keep[k++] = p; else free(p);
	}
	for (int i = 0; i < 2000; i++) keep[k++] = leaf_b(4096);
	for (int i = 0; i < 8; i++) keep[k++] = leaf_a(1 << 20);
	printf("%d\n", k);
	return 0;
}
C
	gcc -O1 -g -fno-omit-frame-pointer -o "$tmp/alloc" "$tmp/alloc.c"
	(cd "$tmp" && LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,prof_final:true,prof_accum:true,lg_prof_sample:14,prof_prefix:$tmp/je_accum ./alloc >/dev/null)
	cp "$tmp"/je_accum.*.f.heap "$golden/jemalloc_accum.heap"
	(cd "$tmp" && LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,prof_final:true,prof_prefix:$tmp/je_default ./alloc >/dev/null)
	cp "$tmp"/je_default.*.f.heap "$golden/jemalloc_default.heap"
	(cd "$tmp" && LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4 HEAPPROFILE=$tmp/gp ./alloc >/dev/null 2>&1)
	cp "$tmp"/gp.0001.heap "$golden/gperftools_heapprofile.heap"

	# --- threads: jemalloc's per-thread lines with thread names in the header
	# (prof_sys_thread_name), and gperftools' HEAP_PROFILE_MMAP records ---
	cat >"$tmp/mt.c" <<'C'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) void *worker_alloc(size_t n) { void *p = malloc(n); memset(p, 3, n); return p; }
static void *keep[4][3000];
static void *worker(void *arg)
{
	long id = (long)arg;
	char name[16] = "worker-0";
	name[7] = (char)('0' + id);
	pthread_setname_np(pthread_self(), name);
	for (int i = 0; i < 3000; i++)
		keep[id][i] = worker_alloc(64 + (size_t)id * 1000 + (size_t)(i % 5) * 16);
	return NULL;
}
int main(void)
{
	pthread_t t[4];
	for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
	return 0;
}
C
	gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$tmp/mt" "$tmp/mt.c"
	(cd "$tmp" && LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:12,prof_sys_thread_name:true,prof_prefix:$tmp/jemt ./mt)
	cp "$tmp"/jemt.*.f.heap "$golden/jemalloc_threads.heap"
	(cd "$tmp" && LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4 HEAPPROFILE=$tmp/gpm HEAP_PROFILE_MMAP=true ./mt >/dev/null 2>&1)
	cp "$tmp"/gpm.0001.heap "$golden/gperftools_mmap.heap"

	# --- tcmalloc's sampled heap (heap_v2/R legacy header) and growth stacks ---
	cat >"$tmp/tc.cc" <<'CC'
#include <gperftools/malloc_extension.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
extern "C" __attribute__((noinline)) void *tc_leaf_a(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
extern "C" __attribute__((noinline)) void *tc_leaf_b(size_t n) { return calloc(1, n); }
int main(int argc, char **argv)
{
	std::vector<void *> keep;
	for (int i = 0; i < 40000; i++) {
		void *p = tc_leaf_a(64 + (i % 9) * 32);
		if (i % 4 == 0) keep.push_back(p); else free(p);
	}
	for (int i = 0; i < 3000; i++) keep.push_back(tc_leaf_b(8192));
	for (int i = 0; i < 12; i++) keep.push_back(tc_leaf_a(3 << 20));
	std::string s;
	if (argc > 1 && strcmp(argv[1], "growth") == 0) MallocExtension::instance()->GetHeapGrowthStacks(&s);
	else MallocExtension::instance()->GetHeapSample(&s);
	fwrite(s.data(), 1, s.size(), stdout);
	return 0;
}
CC
	g++ -O1 -g -fno-omit-frame-pointer -o "$tmp/tc" "$tmp/tc.cc" -ltcmalloc
	TCMALLOC_SAMPLE_PARAMETER=65536 "$tmp/tc" >"$golden/tcmalloc_sample.heap"
	"$tmp/tc" growth >"$golden/tcmalloc_growth.heap"

	# --- Go's runtime/pprof debug=1 text: "heap profile: ... @ heap/<2R>" ---
	mkdir -p "$tmp/go"
	cat >"$tmp/go/main.go" <<'GO'
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var keep [][]byte

//go:noinline
func small(n int) []byte { return make([]byte, n) }

//go:noinline
func big(n int) []byte { return make([]byte, n) }

func main() {
	runtime.MemProfileRate = 64 * 1024
	for i := 0; i < 20000; i++ {
		b := small(256 + (i%5)*64)
		if i%2 == 0 {
			keep = append(keep, b)
		}
	}
	for i := 0; i < 16; i++ {
		keep = append(keep, big(1<<20))
	}
	runtime.GC()
	pprof.Lookup("heap").WriteTo(os.Stdout, 1)
}
GO
	printf 'module goldheap\n\ngo 1.19\n' >"$tmp/go/go.mod"
	(cd "$tmp/go" && GOCACHE=$tmp/gocache GOPATH=$tmp/gopath go build -o goheap . && ./goheap) >"$golden/go_debug1.heap"
	# the same profile as pprof protobuf, converted by Go's own pprof (for the format detection test)
	go tool pprof -proto "$golden/go_debug1.heap" >"$golden/go_debug1.pb.gz" 2>/dev/null

	# --- jeprof --raw: a symbolized file fetched from a loopback server that answers
	# /pprof/symbol with made-up names (every 4th address unresolved, some inline chains) ---
	cat >"$tmp/symsrv.py" <<'PY'
import http.server, sys
profile = open(sys.argv[1], 'rb').read()
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def reply(self, body):
        self.send_response(200)
        self.send_header('Content-Type', 'text/plain')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(body)
    def do_HEAD(self): self.reply(b'')
    def do_GET(self):
        if self.path.startswith('/pprof/symbol'): self.reply(b'num_symbols: 1\n')
        elif self.path.startswith('/pprof/cmdline'): self.reply(b'/usr/bin/golden\n')
        elif self.path.startswith('/pprof/heap'): self.reply(profile)
        else: self.send_error(404)
    def do_POST(self):
        n = int(self.headers.get('Content-Length', 0))
        out = []
        for a in self.rfile.read(n).decode().strip().split('+'):
            v = int(a, 16)
            if v % 4 == 3:
                continue
            name = 'fn_%x' % v
            if v % 4 == 1:
                name = 'outer_%x--mid_%x--inner_%x' % (v, v, v)
            out.append('0x%x %s' % (v, name))
        self.reply(('\n'.join(out) + '\n').encode())
srv = http.server.HTTPServer(('127.0.0.1', 0), H)
open(sys.argv[2], 'w').write(str(srv.server_address[1]))
srv.serve_forever()
PY
	python3 "$tmp/symsrv.py" "$golden/jemalloc_accum.heap" "$tmp/port" &
	srv=$!
	for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
	JEPROF_TMPDIR=$tmp jeprof --raw "http://127.0.0.1:$(cat "$tmp/port")/pprof/heap" >"$golden/raw_jemalloc.heap" 2>/dev/null
	kill $srv
fi

# --- the expectations: jeprof's totals for every golden profile ---
jeprof_total() { # file, selector -> the number of jeprof's "Total:" line (none for an empty profile: 0)
	local out
	local prog=/bin/true
	head -n 1 "$1" | grep -q '^--- *symbol' && prog="" # a symbolized file names its binary itself
	out=$(jeprof --text --show_bytes "--$2" $prog "$1" 2>/dev/null) || { echo "regen.sh: jeprof failed on $1" >&2; exit 1; }
	out=$(sed -n 's/^Total: \([0-9-]*\) .*/\1/p' <<<"$out")
	echo "${out:-0}"
}
for f in "$golden"/*.heap; do
	name=$(basename "$f" .heap)
	src=$f note=""
	if grep -q '^heap profile:.*@ *heap/' "$f" && grep -q '^0: ' "$f"; then
		# jeprof's v1 rule divides by the object count and dies on records with 0 live objects
		# ("Illegal division by zero"); heaptap leaves such a pair unscaled. Reproduce that with
		# jeprof: inuse totals from a copy without those records (they add 0 live), alloc totals
		# from a copy whose live pair is replaced by the alloc pair (never 0 in these files).
		sed '/^0: 0 \[/d' "$f" >"$tmp/inuse.heap"
		sed -E 's/^[0-9]+: [0-9]+ \[([0-9]+): ([0-9]+)\]/\1: \2 [\1: \2]/' "$f" >"$tmp/alloc.heap"
		note="# jeprof dies on '0: 0 [..]' v1 records; totals computed with those pairs left unscaled (see regen.sh)"
	fi
	{
		echo "# jeprof --text --show_bytes totals, written by tests/golden/regen.sh"
		[ -n "$note" ] && echo "$note"
		for sel in inuse_space inuse_objects alloc_space alloc_objects; do
			use=$src
			if [ -n "$note" ]; then
				case $sel in inuse_*) use=$tmp/inuse.heap ;; *) use=$tmp/alloc.heap ;; esac
			fi
			v=$(jeprof_total "$use" "$sel") || exit 1
			echo "$sel $v"
		done
	} >"$golden/$name.expect"
	echo "$name: $(grep -v '^#' "$golden/$name.expect" | tr '\n' ' ')"
done
