/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_jeprof.c - `heaptap jeprof [jeprof options] [BINARY] PROFILE...`: jeprof's command line
 * on heaptap's analyzer, so scripts written for jeprof run with `heaptap jeprof` in its place.
 * It maps jeprof's output modes onto heaptap's views (--text, --collapsed, the Graphviz
 * formats, --callgrind, --raw), fetches remote profiles (http://host:port/pprof/heap) and
 * refuses, with a reason, the modes that need a viewer or a disassembler. Loading is common.c's,
 * the reports views.c's and render/; this file parses, fetches and dispatches.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../include/heaptap.h"
#include "../profile/symtab.h"
#include "cmd.h"
#include "common.h"
#include "mapfile.h"
#include "httpget.h"
#include "render/graphviz.h"
#include "stacks.h"
#include "views.h"

enum mode { M_NONE = -1, M_TEXT, M_COLLAPSED, M_CALLGRIND, M_RAW, M_GRAPH /* + enum graphviz_format */ };

enum {
	J_MODE = 1,      /* + enum mode: the mode flags */
	J_HEAPCHECK = 64,
	J_VERSION,
	J_IGNORED,       /* accepted, nothing to do (remote CPU seconds, tool paths, gv scale, ...) */
	J_VIEWER,        /* --gv --evince --web: open a viewer */
	J_UNSUPPORTED,   /* everything else jeprof has and heaptap does not */
};

static const struct common_opt jeprof_opts[] = {
	{"text", 0, J_MODE + M_TEXT},
	{"collapsed", 0, J_MODE + M_COLLAPSED},
	{"callgrind", 0, J_MODE + M_CALLGRIND},
	{"raw", 0, J_MODE + M_RAW},
	{"dot", 0, J_MODE + M_GRAPH + GRAPHVIZ_DOT},
	{"svg", 0, J_MODE + M_GRAPH + GRAPHVIZ_SVG},
	{"pdf", 0, J_MODE + M_GRAPH + GRAPHVIZ_PDF},
	{"ps", 0, J_MODE + M_GRAPH + GRAPHVIZ_PS},
	{"gif", 0, J_MODE + M_GRAPH + GRAPHVIZ_GIF},
	{"png", 0, J_MODE + M_GRAPH + GRAPHVIZ_PNG},
	{"heapcheck", 0, J_HEAPCHECK},
	{"version", 0, J_VERSION},
	{"seconds", 1, J_IGNORED},
	{"tools", 1, J_IGNORED},
	{"scale", 1, J_IGNORED},
	{"debug-syms-by-id", 0, J_IGNORED},
	{"debug", 0, J_IGNORED},
	{"gv", 0, J_VIEWER},
	{"evince", 0, J_VIEWER},
	{"web", 0, J_VIEWER},
	{"interactive", 0, J_UNSUPPORTED},
	{"list", 1, J_UNSUPPORTED},
	{"disasm", 1, J_UNSUPPORTED},
	{"symbols", 0, J_UNSUPPORTED},
	{"add_lib", 1, J_UNSUPPORTED},
	{"thread", 1, J_UNSUPPORTED},
	{"retain", 1, J_UNSUPPORTED},
	{"exclude", 1, J_UNSUPPORTED},
	{"stacks", 0, J_UNSUPPORTED},
	{"test", 0, J_UNSUPPORTED},
	{"total_delay", 0, J_UNSUPPORTED},
	{"contentions", 0, J_UNSUPPORTED},
	{"mean_delay", 0, J_UNSUPPORTED},
	{NULL, 0, 0},
};

static const char jeprof_help[] =
	"usage: heaptap jeprof [jeprof options] [BINARY] PROFILE...\n"
	"       heaptap jeprof [jeprof options] [BINARY] http://host:port[/pprof/heap]\n"
	"jeprof's command line on heaptap's analyzer: put `heaptap jeprof` where a script calls\n"
	"`jeprof`. PROFILE is any profile heaptap reads (jemalloc and heaptap heap_v2, gperftools,\n"
	"pprof, jeprof --raw) or a URL (host:port[/path]; the path defaults to /pprof/heap), fetched\n"
	"over plain HTTP and symbolized from the local files its map names (or BINARY).\n"
	"output modes (one; default --text):\n"
	"  --text                 jeprof's text report (--nodecount is for graphs, as in jeprof)\n"
	"  --collapsed            folded stacks for flame graphs (heaptap flame, flamegraph.pl)\n"
	"  --dot --svg --pdf --ps --gif --png   the call graph (Graphviz's dot makes all but --dot)\n"
	"  --callgrind            callgrind format (KCachegrind)\n"
	"  --raw                  a symbolized profile (jeprof and heaptap read it without BINARY)\n"
	"  -o FILE                write to FILE; without a mode its extension decides (.txt\n"
	"                         .collapsed .folded .callgrind .raw .dot .svg .pdf .ps .gif .png)\n"
	"  --heapcheck            graphs: grey boxes for functions that hold memory themselves\n"
	"  --version              print the version\n"
	"accepted and ignored: --seconds --tools --scale --debug-syms-by-id (build IDs are always used)\n"
	"refused (exit 2): --interactive --gv --evince --web --list --disasm --symbols --add_lib\n"
	"  --thread --retain --exclude --stacks --test and the contention options\n";

struct jeprof_ctx {
	int mode;       /* enum mode, M_GRAPH + format for graphs */
	int nmodes;     /* how many mode flags were given (jeprof takes one) */
	int heapcheck;
	int version;
};

static int handle(void *vctx, int id, const char *v)
{
	struct jeprof_ctx *c = vctx;
	if (id >= J_MODE && id < J_HEAPCHECK) {
		if (c->nmodes++ && c->mode != id - J_MODE) {
			fprintf(stderr, "heaptap: jeprof: only one output mode may be given\n"
			                "heaptap: try 'heaptap jeprof --help'\n");
			return 2;
		}
		c->mode = id - J_MODE;
		return 0;
	}
	switch (id) {
	case J_HEAPCHECK: c->heapcheck = 1; return 0;
	case J_VERSION: c->version = 1; return 0;
	case J_IGNORED: return 0;
	case J_VIEWER:
		fprintf(stderr, "heaptap: jeprof: --gv, --evince and --web open a viewer, which heaptap does "
		                "not; write the file and open it yourself (--svg > graph.svg, --pdf, --ps)\n");
		return 2;
	case J_UNSUPPORTED:
		fprintf(stderr, "heaptap: jeprof: this jeprof option is not supported by heaptap (interactive "
		                "mode, --list, --disasm, --symbols, --add_lib, --thread, --retain, --exclude, "
		                "--stacks, --test and the CPU/contention options); see 'heaptap jeprof --help'\n");
		(void)v;
		return 2;
	}
	return 0;
}

/* The mode -o's extension names, or M_NONE. */
static int mode_from_path(const char *path)
{
	int g = graphviz_format_from_path(path);
	if (g >= 0)
		return M_GRAPH + g;
	const char *slash = strrchr(path, '/');
	const char *dot = strrchr(slash ? slash : path, '.');
	if (!dot)
		return M_NONE;
	static const struct {
		const char *ext;
		int mode;
	} exts[] = {{".txt", M_TEXT}, {".text", M_TEXT}, {".collapsed", M_COLLAPSED}, {".folded", M_COLLAPSED},
	            {".callgrind", M_CALLGRIND}, {".raw", M_RAW}};
	for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
		if (strcasecmp(dot, exts[i].ext) == 0)
			return exts[i].mode;
	return M_NONE;
}

/* Settles the mode from the flags and -o. Returns 0 or 2 (usage error printed). */
static int pick_mode(struct common_args *a, struct jeprof_ctx *c)
{
	int named = a->output && strcmp(a->output, "-") != 0;
	int from_ext = named ? mode_from_path(a->output) : M_NONE;
	if (c->mode == M_NONE && named && from_ext == M_NONE)
		return common_usage_error(a, "cannot tell the output format from the name '%s' (.txt .collapsed "
		                             ".folded .callgrind .raw %s), or give a mode such as --text",
		                          a->output, graphviz_extensions());
	if (c->mode != M_NONE && from_ext >= M_GRAPH && from_ext != c->mode)
		return common_usage_error(a, "-o %s names %s output, which the output mode contradicts",
		                          a->output, graphviz_format_name(from_ext - M_GRAPH));
	if (c->mode == M_NONE) {
		c->mode = from_ext != M_NONE ? from_ext : M_TEXT;
		if (!named && isatty(1))
			fprintf(stderr, "heaptap: jeprof: interactive mode is not supported; printing --text\n");
	}
	return 0;
}

/* A fetched profile: a temporary file, removed at the end. */
struct fetched {
	char path[64];
};

/* Fetches url into a new temporary file (path in f). Returns 0 or 1 (message printed). */
static int fetch(const char *url, struct fetched *f)
{
	const char *dir = getenv("JEPROF_TMPDIR");
	if (!dir || !*dir || access(dir, W_OK) != 0)
		dir = "/tmp";
	int n = snprintf(f->path, sizeof(f->path), "%s/heaptap-jeprof-XXXXXX", dir);
	if (n < 0 || (size_t)n >= sizeof(f->path))
		snprintf(f->path, sizeof(f->path), "/tmp/heaptap-jeprof-XXXXXX");
	int fd = mkstemp(f->path);
	if (fd < 0) {
		fprintf(stderr, "heaptap: jeprof: %s: %s\n", f->path, strerror(errno));
		f->path[0] = '\0';
		return 1;
	}
	char err[512];
	int r = httpget_fetch(url, "/pprof/heap", fd, 60, err, sizeof(err));
	if (close(fd) != 0 && r == 0) {
		snprintf(err, sizeof(err), "%s: %s", f->path, strerror(errno));
		r = -1;
	}
	if (r != 0) {
		fprintf(stderr, "heaptap: jeprof: %s\n", err);
		return 1;
	}
	return 0;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* jeprof --raw: the symbol section for p's addresses, then the profile text of path verbatim.
   Returns 0 or 1 (message printed). */
static int write_raw(const struct common_args *a, const struct profile *p, const char *path, const char *shown)
{
	size_t n = 0;
	const unsigned char *m = mapfile_map(path, &n);
	int text = m && n > 0 && !(n >= 2 && m[0] == 0x1f && m[1] == 0x8b) && !memchr(m, '\0', n) &&
	           strncmp((const char *)m, "--- ", 4) != 0;
	if (!text) {
		mapfile_unmap(m, n);
		fprintf(stderr, "heaptap: jeprof: %s: --raw embeds a text profile (heap_v2 or gperftools); "
		                "this one is %s\n", shown, m ? "binary or already symbolized" : "empty");
		return 1;
	}
	size_t naddr = 0;
	for (size_t i = 0; i < p->nsamples; i++)
		naddr += p->samples[i].naddrs;
	uint64_t *addrs = malloc((naddr + 1) * sizeof(*addrs));
	if (!addrs) {
		mapfile_unmap(m, n);
		fprintf(stderr, "heaptap: jeprof: out of memory\n");
		return 1;
	}
	size_t k = 0;
	for (size_t i = 0; i < p->nsamples; i++)
		for (uint32_t j = 0; j < p->samples[i].naddrs; j++)
			addrs[k++] = p->samples[i].addrs[j];
	qsort(addrs, k, sizeof(*addrs), cmp_u64);
	printf("--- symbol\n");
	const char *bin = a->binary ? a->binary : p->exe_path;
	if (bin)
		printf("binary=%s\n", bin);
	for (size_t i = 0; i < k; i++) {
		if (i && addrs[i] == addrs[i - 1])
			continue;
		const struct prof_symbol *s = p->syms ? symtab_get(p->syms, addrs[i]) : NULL;
		printf("0x%016llx ", (unsigned long long)addrs[i]);
		if (!s || !s->nframes || !s->frames[s->nframes - 1].func) {
			/* no name: "<library>+0x<offset>" as everywhere else, or the address */
			const struct prof_mapping *mp = profile_find_mapping(p, addrs[i]);
			const char *lib = mp && mp->path && mp->path[0] && mp->path[0] != '[' ? strrchr(mp->path, '/') : NULL;
			if (lib)
				printf("%s+0x%llx\n", lib + 1, (unsigned long long)(addrs[i] - mp->start + mp->offset));
			else
				printf("0x%016llx\n", (unsigned long long)addrs[i]);
			continue;
		}
		for (uint32_t f = s->nframes; f-- > 0;) /* outer--inner */
			printf("%s%s", s->frames[f].func ? s->frames[f].func : "??", f ? "--" : "\n");
	}
	printf("---\n--- heap\n");
	fwrite(m, 1, n, stdout);
	free(addrs);
	mapfile_unmap(m, n);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "heaptap: jeprof: write: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

int cmd_jeprof(int argc, char **argv)
{
	struct jeprof_ctx c = {.mode = M_NONE};
	struct common_extra ex = {.opts = jeprof_opts, .handle = handle, .ctx = &c, .help = jeprof_help};
	struct common_args a;
	int rc = common_parse(&a, argc, argv, &ex);
	if (rc >= 0)
		return rc;
	if (c.version) {
		printf("heaptap jeprof %s (jeprof's command line on heaptap)\n", HEAPTAP_VERSION);
		common_args_release(&a);
		return 0;
	}
	if ((rc = pick_mode(&a, &c)) != 0) {
		common_args_release(&a);
		return rc;
	}
	if (c.mode == M_RAW && (a.nprofiles != 1 || a.base)) {
		rc = common_usage_error(&a, "--raw takes exactly one profile and no --base");
		common_args_release(&a);
		return rc;
	}
	if (c.mode >= M_GRAPH && c.mode != M_GRAPH + GRAPHVIZ_DOT) {
		char *dot = graphviz_find_dot();
		if (!dot) {
			fprintf(stderr, "heaptap: jeprof: cannot make %s: Graphviz 'dot' is not on PATH "
			                "(apt-get install graphviz), or use --dot\n", graphviz_format_name(c.mode - M_GRAPH));
			common_args_release(&a);
			return 1;
		}
		free(dot);
	}

	/* Remote profiles: fetched into temporary files that stand in for the URLs. */
	struct fetched *tmp = calloc(a.nprofiles + 1, sizeof(*tmp));
	char *shown0 = a.nprofiles ? strdup(a.profiles[0]) : NULL;
	rc = tmp ? 0 : 1;
	for (size_t k = 0; rc == 0 && k < a.nprofiles; k++) {
		if (!httpget_is_url(a.profiles[k]))
			continue;
		rc = fetch(a.profiles[k], &tmp[k]);
		if (rc == 0) {
			char *dup = strdup(tmp[k].path);
			if (!dup) {
				rc = 1;
				break;
			}
			free(a.profiles[k]);
			a.profiles[k] = dup;
		}
	}
	if (rc == 0 && a.base && httpget_is_url(a.base)) {
		rc = fetch(a.base, &tmp[a.nprofiles]);
		if (rc == 0)
			a.base = tmp[a.nprofiles].path;
	}

	struct profile p;
	profile_init(&p);
	if (rc == 0)
		rc = common_load(&a, &p, 1);
	if (rc == 0 && c.mode != M_RAW && c.mode < M_GRAPH && common_redirect_stdout(&a))
		rc = 1;
	if (rc == 0) {
		switch (c.mode) {
		case M_TEXT:
			a.nodecount = -1; /* jeprof --text prints every row */
			rc = views_text(stdout, &a, &p);
			break;
		case M_COLLAPSED:
			rc = views_folded(stdout, &a, &p, NULL, FOLDED_NEG_DROP);
			break;
		case M_CALLGRIND:
			rc = views_callgrind(stdout, &a, &p);
			break;
		case M_RAW:
			rc = common_redirect_stdout(&a) ? 1 : write_raw(&a, &p, a.profiles[0], shown0 ? shown0 : a.profiles[0]);
			break;
		default:
			rc = views_graph(&a, &p, c.mode - M_GRAPH, c.heapcheck);
			break;
		}
	}
	profile_release(&p);
	for (size_t k = 0; tmp && k <= a.nprofiles; k++)
		if (tmp[k].path[0])
			unlink(tmp[k].path);
	free(tmp);
	free(shown0);
	common_args_release(&a);
	return rc;
}
