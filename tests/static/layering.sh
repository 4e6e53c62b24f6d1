#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# layering.sh - calls between heaptap's C files flow one way: no two files of lib/, cli/,
# profile/ or base/ call each other, directly or through a chain (tests/static/layering.py reads
# the built objects with nm). docs/INTERNALS.md draws the resulting order.
set -u
command -v nm >/dev/null || { echo "nm not installed"; exit 77; }
exec python3 "$(dirname "$0")/layering.py"
