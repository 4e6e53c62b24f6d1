# tests/e2e/lib/http.sh - what the http_* tests share: a scratch directory $tmp and the host's
# $pid, cleaned up at exit (the host is told to stop through $tmp/stop and $tmp/go, then killed),
# the failure counter $fails with fail/ok, free_port, and fetch/header/json over the last reply
# from the server at $U. Sourced after the script's tool checks, never run; asserts nothing.
tmp=$(mktemp -d)
pid=
cleanup() {
	touch "$tmp/stop" "$tmp/go"
	[ -n "$pid" ] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# fetch PATH [curl args...]: GET $U$PATH; body in $tmp/body, headers in $tmp/hdr, status in $code
fetch() {
	local path=$1; shift
	code=$(curl -s -o "$tmp/body" -D "$tmp/hdr" -w '%{http_code}' "$@" "$U$path")
}
header() { grep -i "^$1:" "$tmp/hdr" | head -n 1 | cut -d: -f2- | sed 's/^ //; s/\r$//'; }
json() { # python expression over j (the parsed body)
	python3 -c "import json,sys; j=json.load(open('$tmp/body')); print($1)" 2>&1
}
