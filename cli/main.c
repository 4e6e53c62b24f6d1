/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * main.c - the heaptap command-line tool's entry point: the command table, top-level
 * --help / --version, and `heaptap help CMD`. Each command lives in cli/cmd_<name>.c (see
 * cmd.h); this file only dispatches and never parses a command's own options.
 */
#include <stdio.h>
#include <string.h>

#include "../include/heaptap.h"
#include "cmd.h"
#include "memlimit.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help; /* one line */
};

/* One row per command; keep the order of `heaptap --help`. */
static const struct command commands[] = {
	{"top", cmd_top, "where the memory is: jeprof --text layout, by function/line/file"},
	{"diff", cmd_diff, "what grew and shrank between two profiles (--base OLD NEW)"},
	{"collapsed", cmd_collapsed, "folded stacks (root;...;leaf N) for flame graph tools"},
	{"callgraph", cmd_callgraph, "call graph as dot, svg or pdf (jeprof --dot/--svg/--pdf)"},
	{"merge", cmd_merge, "sum several profiles into one heap_v2 file (-o OUT)"},
	{"run", cmd_run, "run a program under the collector and report its heap at exit"},
	{"flame", cmd_flame, "interactive SVG flame graph (differential with --base)"},
	{"report", cmd_report, "self-contained HTML report over a series of dumps: growth, leak suspects"},
	{"pprof", cmd_pprof, "symbolized pprof protobuf for go tool pprof (-o OUT.pb.gz)"},
	{"push", cmd_push, "upload profiles to Pyroscope, Parca or an agent (--url URL), symbolized"},
	{"jeprof", cmd_jeprof, "jeprof's command line (--text, --collapsed, --svg, --gif, URLs, ...) on heaptap"},
	{"addr2line", cmd_addr2line, "resolve addresses of an ELF file like addr2line -f -i -C (fast)"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: heaptap <command> [options] [BINARY] PROFILE...\n"
	           "       heaptap help <command> | --help | --version\n\n"
	           "heaptap reads jemalloc (heap_v2), heaptap, gperftools and pprof heap profiles.\n\n"
	           "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n`heaptap <command> --help` describes a command's options.\n");
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
		printf("heaptap %s\n", HEAPTAP_VERSION);
		return 0;
	}
	if (strcmp(name, "help") == 0) {
		if (argc < 3) {
			usage(stdout);
			return 0;
		}
		const struct command *c = find(argv[2]);
		if (!c) {
			fprintf(stderr, "heaptap: help: unknown command '%s' (see heaptap --help)\n", argv[2]);
			return 2;
		}
		char *hargv[] = {argv[2], "--help", NULL};
		return c->fn(2, hargv);
	}
	const struct command *c = find(name);
	if (!c) {
		fprintf(stderr, "heaptap: unknown command '%s' (see heaptap --help)\n", name);
		return 2;
	}
	if (memlimit_init() != 0)
		return 2;
	return c->fn(argc - 1, argv + 1);
}
