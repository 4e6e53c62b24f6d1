#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# fleet_delta_recycled.sh - a delta profile loses nothing silently when the stack table recycles
# stacks inside its window: fleet_host (default options, so stacks without live samples are
# recycled; every allocation sampled, so the values are exact) allocates and frees 6,000 blocks
# of 100 bytes from 6,000 distinct call paths between two /debug/pprof/delta_heap requests.
# The table recycles most of those stacks before the second snapshot, so their allocations are
# in no stack; the profile must say so (heaptap: recycled_stacks/objs/bytes comments) with the
# exact remainder: shown path_site bytes + recycled bytes = 600,000, objects likewise 6,000,
# other sites exact; and `heaptap top` on it prints the one warning line naming them.
set -u
for tool in curl python3; do
	command -v $tool >/dev/null || { echo "skip: $tool not installed"; exit 77; }
done
command -v go >/dev/null || [ -x /usr/lib/go/bin/go ] || { echo "skip: go not installed"; exit 77; }
. "$(dirname "$0")/lib/http.sh"
. "$(dirname "$0")/lib/fleet.sh"
[ -x "$FLEET_PROG" ] || { echo "missing $FLEET_PROG (make progs)"; exit 1; }
HEAPTAP=${HEAPTAP:-$HEAPTAP_BUILD/heaptap-asan}
port=$(free_port)
U=http://127.0.0.1:$port
fleet_start "http:127.0.0.1:$port,lg_prof_sample:0"

cmd keep 5 1000
fetch /debug/pprof/delta_heap
[ "$code" = 200 ] || fail "first delta_heap: $code"
cmd paths 6000 100
cmd churn 10 4096
fetch /debug/pprof/delta_heap
[ "$code" = 200 ] || fail "second delta_heap: $code"
cp "$tmp/body" "$tmp/dh.pb.gz"
fetch /heaptap/stats
recycled_total=$(json 'j["sampler"]["stacks_recycled"]')
# the comments of the profile (strings of its string table)
read -r rs ro rb < <(python3 - "$tmp/dh.pb.gz" <<'PY'
import gzip, sys
d = gzip.open(sys.argv[1]).read()
def varint(i):
    v = s = 0
    while True:
        b = d[i]; i += 1; v |= (b & 0x7f) << s; s += 7
        if b < 0x80:
            return v, i
strings, i = {}, 0
while i < len(d): # Profile's fields; string_table is field 6
    key, i = varint(i)
    if key & 7 == 0:
        _, i = varint(i)
    elif key & 7 == 2:
        n, i = varint(i)
        if key >> 3 == 6 and d[i:i + 9] == b"heaptap: " and b"=" in d[i:i + n]:
            k, v = d[i + 9:i + n].decode().split("=", 1)
            strings[k] = v
        i += n
    else:
        sys.exit("unexpected wire type %d" % (key & 7))
print(*(strings.get(k, "0") for k in ("recycled_stacks", "recycled_objs", "recycled_bytes")))
PY
)
shown_b=$(site_value "$tmp/dh.pb.gz" alloc_space path_site)
shown_o=$(site_value "$tmp/dh.pb.gz" alloc_objects path_site)
echo "note: $recycled_total stacks recycled since start; the profile: recycled_stacks=$rs recycled_objs=$ro recycled_bytes=$rb, path_site shows $shown_b B in $shown_o objects"
[ "$rs" -gt 1000 ] && ok "recycled_stacks $rs (of 6000 short-lived stacks)" || fail "recycled_stacks $rs: the recycled stacks' allocations are not reported"
[ $((shown_b + rb)) = 600000 ] && ok "shown + recycled bytes = 600000" || fail "shown $shown_b + recycled $rb bytes != 600000"
[ $((shown_o + ro)) = 6000 ] && ok "shown + recycled objects = 6000" || fail "shown $shown_o + recycled $ro objects != 6000"
v=$(site_value "$tmp/dh.pb.gz" alloc_space churn_site)
[ "$v" = 40960 ] && ok "churn_site exact (40960)" || fail "churn_site $v, want 40960"
"$HEAPTAP" top --alloc_space "$FLEET_PROG" "$tmp/dh.pb.gz" >/dev/null 2>"$tmp/top.err" || fail "heaptap top exited $?"
n=$(grep -c "warning: .*$ro objects .* allocated from $rs stacks the collector recycled" "$tmp/top.err")
[ "$n" = 1 ] && ok "heaptap top warns once" || fail "heaptap top's warning: $(cat "$tmp/top.err")"
fleet_stop || fail "host exit status"
[ $fails -eq 0 ] && echo "all recycled-delta checks passed"
exit $((fails > 0))
