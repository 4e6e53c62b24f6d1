/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_top.c - `heaptap top`: where the memory is, in jeprof's --text layout (so scripts that
 * parse jeprof output keep working). Loading and option parsing are common.c's, naming and
 * totals stacks.c's, the layout render/text.c's (through views.c).
 */
#include <stdio.h>

#include "cmd.h"
#include "common.h"
#include "memline.h"
#include "views.h"

static const char top_help[] =
	"usage: heaptap top [options] [BINARY] PROFILE...\n"
	"Prints where the memory is, one row per function (or line, address, file), in the layout of\n"
	"jeprof --text: flat, flat%, sum%, cum, cum%, name. With several profiles they are summed.\n"
	"  --nodecount=N          print at most N rows (default: all)\n"
	"  --cum                  sort by cumulative instead of flat\n"
	"  --text                 accepted and ignored, as in `jeprof --text`\n";

int cmd_top(int argc, char **argv)
{
	struct common_args a;
	/* jeprof's mode flag, accepted so a jeprof command line works as it is */
	static const struct common_opt opts[] = {{"text", 0, 1}, {NULL, 0, 0}};
	struct common_extra ex = {.opts = opts, .help = top_help};
	int rc = common_parse(&a, argc, argv, &ex);
	if (rc >= 0)
		return rc;
	if (common_redirect_stdout(&a)) {
		common_args_release(&a);
		return 1;
	}
	struct profile p;
	profile_init(&p);
	rc = common_load(&a, &p, 1);
	if (rc == 0)
		rc = views_text(stdout, &a, &p);
	char ml[512];
	if (rc == 0 && a.nprofiles == 1 && memline_format(&p.mem, ml, sizeof ml) == 0)
		printf("Memory: %s\n", ml); /* after the table: jeprof's layout above stays as it is */
	profile_release(&p);
	common_args_release(&a);
	return rc;
}
