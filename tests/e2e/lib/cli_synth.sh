# SPDX-License-Identifier: BSD-2-Clause
# tests/e2e/lib/cli_synth.sh - writes two small symbolized (jeprof --raw) heap profiles with
# known numbers for the cli_* tests: cli_old.raw and cli_new.raw in directory $1. Period 1, so
# nothing is scaled. Sourced, never run; it asserts nothing.
#   old: main;handler;leak 10 objs 1000 B   main;hog 1 obj 1048576 B   main;gone 5 objs 5000 B
#   new: main;handler;leak 30 objs 3000 B   main;hog 1 obj 1048576 B   main;new_site 2 objs 2048 B
cli_synth() {
	local dir=$1 syms
	syms='--- symbol
binary=/nonexistent/app
0x0000000000001000 leak
0x0000000000001100 hog
0x0000000000001200 gone
0x0000000000001300 new_site
0x0000000000002000 handler
0x0000000000003000 main
---
--- heap'
	cat >"$dir/cli_old.raw" <<EOT
$syms
heap_v2/1
  t*: 16: 1054576 [0: 0]
@ 0x1000 0x2001 0x3001
  t*: 10: 1000 [0: 0]
@ 0x1100 0x3001
  t*: 1: 1048576 [0: 0]
@ 0x1200 0x3001
  t*: 5: 5000 [0: 0]

MAPPED_LIBRARIES:
00001000-00004000 r-xp 00000000 00:00 0 /nonexistent/app
EOT
	cat >"$dir/cli_new.raw" <<EOT
$syms
heap_v2/1
  t*: 33: 1053624 [0: 0]
@ 0x1000 0x2001 0x3001
  t*: 30: 3000 [0: 0]
@ 0x1100 0x3001
  t*: 1: 1048576 [0: 0]
@ 0x1300 0x3001
  t*: 2: 2048 [0: 0]

MAPPED_LIBRARIES:
00001000-00004000 r-xp 00000000 00:00 0 /nonexistent/app
EOT
}
