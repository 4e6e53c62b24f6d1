#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# host_git.sh - git on a repository of 1500 commits (made with fast-import) under the collector:
# log -p, gc and a grep give the same output and exit codes as unprofiled; every git process
# (git forks and execs helpers) leaves its own parseable dump.
. "$(dirname "$0")/lib/host.sh"
command -v git >/dev/null || host_skip "git not installed"
repo=$HOST_TMP/repo
git init -q "$repo" || host_fail "git init"
python3 - "$repo" <<'PY' | (cd "$repo" && git fast-import --quiet) || host_fail "fast-import"
import sys
out = sys.stdout
for i in range(1, 1501):
    out.write("commit refs/heads/main\nmark :%d\ncommitter T <t@x> %d +0000\n" % (i, 1700000000 + i))
    msg = "change %d\n" % i
    out.write("data %d\n%s" % (len(msg), msg))
    if i > 1:
        out.write("from :%d\n" % (i - 1))
    for f in range(3):
        body = "".join("line %d of file %d at %d\n" % (l, f, i if l % 7 == 0 else 0) for l in range(40))
        out.write("M 644 inline dir%d/file%d.txt\ndata %d\n%s" % (f % 2, (i + f) % 50, len(body), body))
    out.write("\n")
PY
(cd "$repo" && git checkout -q main) || host_fail "checkout"
cmd() { git -C "$repo" log -p --stat -n 400 && git -C "$repo" grep -c 'line 7' HEAD -- dir0 | tail -3 && git -C "$repo" rev-list --count HEAD; }
export -f cmd; export repo
host_compare git bash -c cmd
host_check_parse git.default
host_check_parse git.lg_prof_sample:0
# git gc (forks pack-objects, repack, prune...) under the collector: exit 0 and one dump per process.
host_run gitgc "" git -C "$repo" gc -q
[ "$(cat "$HOST_TMP/gitgc/rc")" = 0 ] || { cat "$HOST_TMP/gitgc/err"; host_fail "git gc failed under the collector"; }
pids=$(ls "$HOST_TMP/gitgc/dumps" | sed -n 's/^heaptap\.\([0-9]*\)\..*\.f\.heap$/\1/p' | sort -u | wc -l)
echo "git gc: $pids processes left final dumps"
[ "$pids" -ge 2 ] || host_fail "git gc: expected dumps from several processes, got $pids"
host_check_parse gitgc
echo "git ok"
