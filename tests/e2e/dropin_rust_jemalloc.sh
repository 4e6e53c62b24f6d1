#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# dropin_rust_jemalloc.sh - a Rust program whose #[global_allocator] is a statically linked,
# _rjem_-prefixed jemalloc with profiling (tests/progs/rust_jemalloc: _rjem_mallctl is in its
# .symtab only, not exported) under libheaptap.so:
#  - without _RJEM_MALLOC_CONF, one stderr line says exactly what to set;
#  - with _RJEM_MALLOC_CONF=prof:true,prof_active:false, heaptap finds that jemalloc, switches
#    its sampling on and serves it (every allocation sampled, lg_prof_sample:0, so the numbers
#    are exact): go tool pprof (symbols from /pprof/symbol) on
#    /debug/pprof/heap and jeprof on /pprof/heap (with and without the binary) put the
#    program's own hog_rust on top with >= 20 MB of its 24 MiB, never a jemalloc or Rust
#    allocator frame; /heaptap/stats is jemalloc's; a signal dump (prof_signal) and
#    heaptap_dump-style manual dumps come from jemalloc too;
#  - heaptap run sets _RJEM_MALLOC_CONF itself and prints hog_rust with ~24 MiB live.
set -u
for tool in curl python3 jeprof go; do
	command -v $tool >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
. "$(dirname "$0")/lib/rustjem.sh"
. "$(dirname "$0")/lib/http.sh"
export HOME=$tmp JEPROF_TMPDIR=$tmp PPROF_TMPDIR=$tmp
mb_ok() { python3 -c "import sys; sys.exit(0 if float('$1') >= 20.0 else 1)" 2>/dev/null; }

# 1. present but not drivable: the advice names the variable
env -u _RJEM_MALLOC_CONF LD_PRELOAD=$HEAPTAP_LIB HEAPTAP_CONF=prof_final:false "$RUSTJEM" >"$tmp/out" 2>"$tmp/err"
grep -q "allocates through its own jemalloc (_rjem_mallctl), with profiling off.*_RJEM_MALLOC_CONF=prof:true,prof_active:false" "$tmp/err" &&
	[ "$(grep -c '^heaptap:' "$tmp/err")" = 1 ] && ok "prof off: one line names _RJEM_MALLOC_CONF=prof:true,prof_active:false" ||
	fail "prof off: $(cat "$tmp/err")"

# 2. driven through HTTP
port=$(free_port)
U=http://127.0.0.1:$port
_RJEM_MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:0 LD_PRELOAD=$HEAPTAP_LIB TMPDIR=$tmp \
	HEAPTAP_CONF="http:127.0.0.1:$port,prof_final:false,prof_prefix:$tmp/sig,prof_signal:12" \
	"$RUSTJEM" "$tmp/stop" >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 100); do grep -q '^ready' "$tmp/out" 2>/dev/null && curl -s -o /dev/null "$U/" && break; sleep 0.1; done
grep -q '^ready' "$tmp/out" || { echo "host did not start"; cat "$tmp/err"; exit 1; }
grep -q "^heaptap: profiling through the jemalloc of $RUSTJEM" "$tmp/err" && ok "stderr: profiling through the jemalloc of the binary" ||
	fail "no 'profiling through' line: $(cat "$tmp/err")"

go tool pprof -symbolize=remote -top -sample_index=inuse_space "$U/debug/pprof/heap" >"$tmp/go" 2>"$tmp/go.err"
read -r flat name < <(awk '/^ *flat/{getline; print $1, $6; exit}' "$tmp/go")
[ "${name:-}" = rust_jemalloc::hog_rust ] && mb_ok "${flat%MB}" && ok "go tool pprof /debug/pprof/heap: hog_rust on top with $flat" ||
	{ fail "go tool pprof top '${name:-}' ${flat:-}"; cat "$tmp/go" "$tmp/go.err" | head -20; }

jeprof --text "$RUSTJEM" "$U/pprof/heap" >"$tmp/jb" 2>"$tmp/jb.err"
read -r mb top < <(awk '/^ *[0-9.]+ +[0-9.]+%/{print $1, $NF; exit}' "$tmp/jb")
cum=$(awk '/rust_jemalloc::hog_rust$/{print $4; exit}' "$tmp/jb")
if mb_ok "${mb:-0}" && mb_ok "${cum:-0}" && ! grep -E '^ *[0-9.]+ +[1-9][0-9.]*%.*(_rjem_|prof_backtrace|__rust_alloc|__rg_alloc)' "$tmp/jb" >/dev/null; then
	ok "jeprof BIN /pprof/heap: top row '$top' ($mb MB) inlined in hog_rust ($cum MB cumulative), no allocator row"
else
	fail "jeprof BIN: top '${top:-}' ${mb:-} hog_rust cum '${cum:-}'"; head -12 "$tmp/jb" "$tmp/jb.err"
fi
# without the binary jeprof takes the names from /pprof/symbol: the function itself is on top
mkdir -p "$tmp/nobin"
PATH=/usr/bin:/bin jeprof --text "$U/pprof/heap" >"$tmp/jr" 2>"$tmp/jr.err"
read -r mb top < <(awk '/^ *[0-9.]+ +[0-9.]+%/{print $1, $NF; exit}' "$tmp/jr")
[[ "${top:-}" == rust_jemalloc::hog_rust* ]] && mb_ok "${mb:-0}" && ok "jeprof /pprof/heap (remote symbols): $top on top with $mb MB" ||
	{ fail "jeprof remote top '${top:-}' ${mb:-}"; head -8 "$tmp/jr" "$tmp/jr.err"; }

fetch /heaptap/stats
[ "$(json '"version" in j["jemalloc"]')" = True ] && ok "/heaptap/stats is jemalloc's malloc_stats_print JSON" || fail "stats: $(head -c 200 "$tmp/body")"

kill -USR2 "$pid"
for _ in $(seq 50); do ls "$tmp"/sig.*.s0.heap >/dev/null 2>&1 && break; sleep 0.1; done
sdump=$(ls "$tmp"/sig.*.s0.heap 2>/dev/null | head -n 1)
if [ -n "$sdump" ] && "$HEAPTAP" top --keep-allocator "$RUSTJEM" "$sdump" >"$tmp/st" 2>&1 &&
	grep -q "rust_jemalloc::hog_rust" "$tmp/st" && ! grep -q "_rjem_" "$tmp/st"; then
	ok "signal dump $(basename "$sdump") from jemalloc, allocator frames already trimmed"
else
	fail "signal dump: ${sdump:-none}"; head "$tmp/st" 2>/dev/null
fi
fetch /heaptap/dump
f=$(json 'j["file"]')
[ -s "$f" ] && head -n 1 "$f" | grep -q '^heap_v2/' && ok "/heaptap/dump via prof.dump" || fail "heaptap/dump: $(cat "$tmp/body")"
host_stop || fail "host exited with $?"

# 3. heaptap run sets _RJEM_MALLOC_CONF itself
env -u _RJEM_MALLOC_CONF HEAPTAP_LIB=$HEAPTAP_LIB "$HEAPTAP" run --conf lg_prof_sample:0 --out "$tmp/run" -- "$RUSTJEM" >"$tmp/run.out" 2>"$tmp/run.err"
rc=$?
live=$(sed -n 's/^heaptap: live heap of .* at exit: \([0-9.]*\) MiB.*/\1/p' "$tmp/run.out")
if [ $rc = 0 ] && grep -q "_RJEM_MALLOC_CONF=prof:true,prof_accum:true,lg_prof_sample:0" "$tmp/run.err" && grep -q "rust_jemalloc::hog_rust" "$tmp/run.out" &&
	mb_ok "${live:-0}" && ! grep -q "with profiling off" "$tmp/run.err"; then
	ok "heaptap run: hog_rust with $live MiB live, _RJEM_MALLOC_CONF set by run"
else
	fail "heaptap run ($rc)"; cat "$tmp/run.out" "$tmp/run.err"
fi
echo "$fails failures"
[ $fails = 0 ]
