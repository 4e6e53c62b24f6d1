/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd.h - the heaptap CLI's commands, one function each in cli/cmd_<name>.c, dispatched by
 * cli/main.c's command table. Each takes the arguments after the command name (argv[0] is
 * the command name) and returns the process exit status: 0 success, 1 bad input (a corrupt
 * profile, a missing file; the message names it), 2 usage error. Reports go to stdout,
 * diagnostics to stderr as "heaptap: <what>: <why>".
 */
#ifndef HEAPTAP_CLI_CMD_H
#define HEAPTAP_CLI_CMD_H

int cmd_top(int argc, char **argv);       /* jeprof --text / pprof -top */
int cmd_diff(int argc, char **argv);      /* top of B minus --base A */
int cmd_collapsed(int argc, char **argv); /* folded stacks for flame graph tools */
int cmd_callgraph(int argc, char **argv); /* dot / svg / pdf call graph */
int cmd_pprof(int argc, char **argv);     /* convert to symbolized pprof protobuf */
int cmd_merge(int argc, char **argv);     /* sum profiles into one */
int cmd_run(int argc, char **argv);       /* run a program under the collector and report */
int cmd_flame(int argc, char **argv);     /* interactive SVG flame graph */
int cmd_report(int argc, char **argv);    /* HTML report over a series of dumps */
int cmd_jeprof(int argc, char **argv);    /* jeprof's command line: its options and output modes */
int cmd_push(int argc, char **argv);      /* upload dumps to Pyroscope / Parca (cli/cmd_push.c) */
int cmd_addr2line(int argc, char **argv); /* addresses of one ELF file -> frames (cli/sym/cmd_addr2line.c) */

#endif
