#!/bin/bash
# tests/static/spdx.sh - every tracked source file carries its license line
# (SPDX-License-Identifier, LICENSE is BSD-2-Clause): scripts/spdx.py --check lists any that
# does not.
set -u
cd "$(dirname "$0")/../.."
python3 scripts/spdx.py --check
