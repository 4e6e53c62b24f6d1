#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/run.sh - runs every benchmark heaptap has, one after another (`make bench`). Each line
# below is one benchmark script; add yours. Exit status: nonzero if any benchmark failed.
set -u
cd "$(dirname "$0")/.."
rc=0
bench/overhead.sh || rc=1
bench/cpu.sh || rc=1
bench/flame.sh || rc=1
bench/fastpath.sh || rc=1
bench/analyze.sh || rc=1
bench/scale.sh || rc=1
exit $rc
