/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_common.c - unit test of cli/common.c: the shared option parser (all option forms,
 * pprof's -sample_index names and numbers, lists, regexes, usage errors and their exit codes,
 * extra command options), ELF-by-content classification of positionals, and jeprof's value and
 * percent formatting.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cli/common.h"
#include "check.h"



static int parse(struct common_args *a, const struct common_extra *ex, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	va_start(ap, ex);
	for (const char *s; (s = va_arg(ap, const char *)) && argc < 31;)
		argv[argc++] = (char *)s;
	va_end(ap);
	argv[argc] = NULL;
	return common_parse(a, argc, argv, ex);
}

static int extra_seen;
static const char *extra_val;
static int extra_handle(void *ctx, int id, const char *v)
{
	extra_seen = id;
	extra_val = v;
	return strcmp(v ? v : "", "bad") == 0 ? 2 : 0;
}

int main(void)
{
	struct common_args a;
	char buf[64];
	FILE *devnull = freopen("/dev/null", "w", stderr); /* usage errors are expected below */
	(void)devnull;

	/* Defaults. */
	CHECK(parse(&a, NULL, "top", "x.heap", NULL) == -1, "plain parse");
	CHECK(a.value_index == PV_INUSE_BYTES && a.gran == GRAN_FUNCTIONS && a.nodecount == -1, "defaults");
	CHECK(a.nodefraction == 0.005 && a.edgefraction == 0.001 && a.maxdegree == 8, "graph defaults");
	CHECK(a.nprofiles == 1 && strcmp(a.profiles[0], "x.heap") == 0 && a.binary == NULL, "one profile");
	common_args_release(&a);

	/* Option forms, binary by content (this test binary is an ELF file) in any position. */
	CHECK(parse(&a, NULL, "top", "a.heap", "--focus=ma.n", "/proc/self/exe", "-ignore", "x|y",
	            "--lib_prefix=/a,/b", "--lib-prefix", "/c", "-sample_index=alloc_objects",
	            "--nodecount", "7", "--lines", "--base=old.heap", "b.heap", NULL) == -1, "forms");
	CHECK(a.binary && strcmp(a.binary, "/proc/self/exe") == 0, "binary '%s'", a.binary ? a.binary : "(null)");
	CHECK(a.nprofiles == 2 && strcmp(a.profiles[1], "b.heap") == 0, "profiles");
	CHECK(a.focus && regexec(&a.focus_re, "main", 0, NULL, 0) == 0, "focus regex");
	CHECK(a.ignore && regexec(&a.ignore_re, "zzy", 0, NULL, 0) == 0, "ignore regex");
	CHECK(a.nlib_prefix == 3 && strcmp(a.lib_prefix[2], "/c") == 0 && a.lib_prefix[3] == NULL, "lib prefixes");
	CHECK(a.value_index == PV_ALLOC_OBJS && a.value_given, "sample_index name");
	CHECK(a.nodecount == 7 && a.gran == GRAN_LINES && strcmp(a.base, "old.heap") == 0, "values");
	common_args_release(&a);

	/* Go numbers the heap sample types alloc_objects, alloc_space, inuse_objects, inuse_space. */
	CHECK(parse(&a, NULL, "top", "-sample_index=1", "x", NULL) == -1 && a.value_index == PV_ALLOC_BYTES, "index 1");
	common_args_release(&a);
	CHECK(parse(&a, NULL, "top", "--inuse_objects", "--inuse_objects", "x", NULL) == -1, "same value twice is fine");
	common_args_release(&a);

	/* "--" ends the options. */
	CHECK(parse(&a, NULL, "top", "--", "--weird-name.heap", NULL) == -1 && a.nprofiles == 1, "after --");
	common_args_release(&a);

	/* Usage errors return 2; --help returns 0. */
	CHECK(parse(&a, NULL, "top", "--nope", NULL) == 2, "unknown option");
	common_args_release(&a);
	CHECK(parse(&a, NULL, "top", "--focus=(", NULL) == 2, "bad regex");
	common_args_release(&a);
	CHECK(parse(&a, NULL, "top", "--nodecount=-1", NULL) == 2, "negative nodecount");
	common_args_release(&a);
	CHECK(parse(&a, NULL, "top", "--nodefraction=2", NULL) == 2, "fraction > 1");
	common_args_release(&a);
	CHECK(parse(&a, NULL, "top", "--show_bytes=1", NULL) == 2, "flag with a value");
	common_args_release(&a);
	CHECK(parse(&a, NULL, "top", "--alloc_space", "--inuse_space", NULL) == 2, "two value selectors");
	common_args_release(&a);
	CHECK(parse(&a, NULL, "top", "--base", NULL) == 2, "missing value");
	common_args_release(&a);
	FILE *saved = stdout;
	stdout = fopen("/dev/null", "w");
	int h = parse(&a, NULL, "top", "--help", NULL);
	fclose(stdout);
	stdout = saved;
	CHECK(h == 0, "--help returns 0, got %d", h);
	common_args_release(&a);

	/* Extra options reach the command's callback; raw positionals are kept in order. */
	static const struct common_opt opts[] = {{"title", 1, 41}, {"inverted", 0, 42}, {NULL, 0, 0}};
	struct common_extra ex = {.opts = opts, .handle = extra_handle};
	CHECK(parse(&a, &ex, "flame", "-title", "T", "x", NULL) == -1 && extra_seen == 41 && strcmp(extra_val, "T") == 0, "extra");
	common_args_release(&a);
	CHECK(parse(&a, &ex, "flame", "--inverted", "x", NULL) == -1 && extra_seen == 42 && extra_val == NULL, "extra flag");
	common_args_release(&a);
	CHECK(parse(&a, &ex, "flame", "--title=bad", NULL) == 2, "extra error");
	common_args_release(&a);
	struct common_extra raw = {.raw_positionals = 1};
	CHECK(parse(&a, &raw, "run", "--", "/proc/self/exe", "-x", "y", NULL) == -1 && a.nrest == 3 &&
	      a.binary == NULL && strcmp(a.rest[1], "-x") == 0, "raw positionals");
	common_args_release(&a);
	CHECK(parse(&a, &raw, "run", "prog", "--focus=x", "-o", NULL) == -1 && a.nrest == 3 &&
	      strcmp(a.rest[1], "--focus=x") == 0 && a.focus == NULL, "options after the program are its own");
	common_args_release(&a);

	CHECK(common_is_elf("/proc/self/exe"), "self is ELF");
	CHECK(!common_is_elf("/proc/self/cmdline"), "cmdline is not ELF");
	CHECK(!common_is_elf("/nonexistent"), "missing file is not ELF");

	/* jeprof's Unparse and Percent. */
	memset(&a, 0, sizeof(a));
	a.value_index = PV_INUSE_BYTES;
	CHECK(strcmp(common_fmt_value(&a, 1572864, buf, sizeof(buf)), "1.5") == 0, "MB: %s", buf);
	CHECK(strcmp(common_unit(&a), "MB") == 0, "unit MB");
	a.show_bytes = 1;
	CHECK(strcmp(common_fmt_value(&a, 1234.9, buf, sizeof(buf)), "1234") == 0, "bytes truncate: %s", buf);
	CHECK(strcmp(common_unit(&a), "B") == 0, "unit B");
	a.value_index = PV_INUSE_OBJS;
	CHECK(strcmp(common_fmt_value(&a, -2.7, buf, sizeof(buf)), "-2") == 0, "objects toward zero: %s", buf);
	CHECK(strcmp(common_unit(&a), "objects") == 0, "unit objects");
	CHECK(strcmp(common_fmt_percent(1, 3, buf, sizeof(buf)), "33.3%") == 0, "percent %s", buf);
	CHECK(strcmp(common_fmt_percent(0, 0, buf, sizeof(buf)), "nan") == 0, "nan");
	CHECK(strcmp(common_fmt_percent(2, 0, buf, sizeof(buf)), "+inf") == 0, "+inf");
	CHECK(strcmp(common_fmt_percent(-2, 0, buf, sizeof(buf)), "-inf") == 0, "-inf");
	CHECK(strcmp(common_fmt_percent(-0.0001, 952, buf, sizeof(buf)), "-0.0%") == 0, "-0.0%%: %s", buf);
	CHECK(strcmp(common_value_name(PV_ALLOC_BYTES), "alloc_space") == 0, "value name");

	return check_finish("cli_common");
}
