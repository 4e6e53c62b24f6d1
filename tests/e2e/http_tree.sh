#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# http_tree.sh - which process of a tree serves the port and profiles (issue 15, items 5 and
# 12). A bash launch script, like Spark's executor script, forks build/progs/http_host and
# waits for it; LD_PRELOAD and HEAPTAP_CONF=http:PORT reach both. The port must end up with
# http_host (the pid /heaptap/stats reports runs build/progs/http_host, not bash) and nothing is
# printed about a taken port. prof_procs:bash hands it back to the shell (named, a shell serves).
# prof_procs with a path glob chooses http_host alone among bash, http_host and jeapi_prog: only
# it writes dumps, the others pass through. With the port held by an outside process, a tree of
# two programs prints one "cannot listen" line, which names prof_procs.
set -u
for tool in curl python3; do
	command -v $tool >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
B=${HEAPTAP_BUILD:-$ROOT/build}
PROG=$(readlink -f "$B/progs/http_host")
OTHER=$(readlink -f "$B/progs/jeapi_prog")
[ -x "$PROG" ] && [ -x "$OTHER" ] || { echo "missing $PROG or $OTHER (make progs)"; exit 1; }
. "$(dirname "$0")/lib/http.sh"
cp "$HEAPTAP_LIB" "$tmp/libheaptap.so"
LIB=$tmp/libheaptap.so

# the launch script: the program in the background (so the script can also run a second one
# once the first is up), then waits for it, as a shell that forks the JVM does. It waits with
# builtins only: a helper program (sleep, grep) would be one more process under the collector.
mkfifo "$tmp/fifo"
cat >"$tmp/launch.sh" <<EOF
#!/bin/bash
"$PROG" "$tmp/stop" >"$tmp/out" &
child=\$!
exec 9<>"$tmp/fifo"
until [[ -f "$tmp/out" && \$(<"$tmp/out") == ready* ]]; do read -r -t 0.05 -u 9 _; done
[ -n "\${RUN_OTHER:-}" ] && "$OTHER" probe >/dev/null
echo "launched \$child" >"$tmp/launched"
wait \$child
EOF
chmod +x "$tmp/launch.sh"

# launch CONF: runs the script under the collector; waits until the program is up
launch() {
	rm -f "$tmp/stop" "$tmp/out" "$tmp/launched"
	env TMPDIR="$tmp" HEAPTAP_CONF="$1" LD_PRELOAD="$LIB" "$tmp/launch.sh" 2>"$tmp/err" &
	pid=$!
	for _ in $(seq 200); do [ -f "$tmp/launched" ] && return 0; sleep 0.05; done
	echo "the tree did not start"; cat "$tmp/err"; exit 1
}
finish() { touch "$tmp/stop"; wait "$pid"; pid=; }
child_pid() { awk '{ print $2 }' "$tmp/launched"; }
served_by() { # the executable of the process behind the port, or "none"
	fetch /heaptap/stats
	[ "$code" = 200 ] || { echo "none"; return; }
	readlink -f "/proc/$(json 'j["pid"]')/exe"
}

port=$(free_port)
U=http://127.0.0.1:$port
launch "http:127.0.0.1:$port,prof_final:false"
got=$(served_by)
[ "$got" = "$PROG" ] && [ "$(json 'j["pid"]')" = "$(child_pid)" ] &&
	ok "http:PORT alone: the program the shell started serves the port" || fail "the port is served by '$got', not $PROG"
grep -q 'cannot listen' "$tmp/err" && fail "a taken-port line in a tree where nobody else holds it: $(cat "$tmp/err")"
finish

launch "http:127.0.0.1:$port,prof_final:false,prof_procs:bash"
got=$(served_by)
[ "$got" = "$(readlink -f /bin/bash)" ] && ok "prof_procs:bash: the shell, named, serves" || fail "prof_procs:bash: served by '$got'"
finish

# prof_procs with a path glob: only http_host profiles; bash and jeapi_prog pass through
mkdir "$tmp/d"
RUN_OTHER=1 launch "http:127.0.0.1:$port,prof_prefix:$tmp/d/ht,prof_procs:*/progs/http_h*+nomatch"
cp=$(child_pid)
finish
dumps=$(ls "$tmp/d")
want=$(ls "$tmp/d" | grep -c "^ht\.$cp\.[0-9]*\.f\.heap$")
[ "$want" = 1 ] && [ "$(echo "$dumps" | grep -vc "^ht\.$cp\.")" = 0 ] &&
	ok "prof_procs: only the named program wrote a dump" || fail "prof_procs dumps: $dumps (child $cp)"

# the port held outside the tree: one line for the whole tree, naming prof_procs
python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); open(sys.argv[2], "w").close(); time.sleep(120)' "$port" "$tmp/held" &
holder=$!
for _ in $(seq 100); do [ -f "$tmp/held" ] && break; sleep 0.05; done
RUN_OTHER=1 launch "http:127.0.0.1:$port,prof_final:false"
finish
kill $holder 2>/dev/null; wait $holder 2>/dev/null
n=$(grep -c 'cannot listen' "$tmp/err")
[ "$n" = 1 ] && grep -q 'prof_procs' "$tmp/err" && ok "port taken outside: one line for the tree" ||
	fail "port taken outside: $n lines: $(cat "$tmp/err")"
exit $((fails > 0))
