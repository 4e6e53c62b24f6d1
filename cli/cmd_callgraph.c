/*
 * cmd_callgraph.c - `heaptap callgraph`: the call graph of a profile as Graphviz dot, or as
 * SVG / PDF by running Graphviz's `dot` on it (jeprof --dot/--svg/--pdf). The graph itself is
 * render/dot.c's; this file picks the format and output and runs `dot`.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "common.h"
#include "memlimit.h"
#include "render/dot.h"
#include "stacks.h"

enum { X_FORMAT = 1, X_DOT, X_SVG, X_PDF, X_HEAPCHECK };
enum { F_AUTO, F_DOT, F_SVG, F_PDF };

static const char callgraph_help[] =
	"usage: heaptap callgraph [options] [--format=dot|svg|pdf] [-o FILE] [BINARY] PROFILE...\n"
	"Draws the call graph the way jeprof --dot/--svg/--pdf does: boxes sized by the memory a\n"
	"function allocated itself, labelled with self and cumulative values; edges carry the memory\n"
	"allocated through each call. SVG and PDF are made by Graphviz's `dot` (graphviz package).\n"
	"  --format=dot|svg|pdf   output format (default: from -o's extension, else dot)\n"
	"  --dot --svg --pdf      the same, jeprof style\n"
	"  -o FILE                write to FILE instead of stdout\n"
	"  --heapcheck            fill the boxes of functions that hold memory themselves (grey)\n"
	"  --nodecount=N (80) --nodefraction=F (0.005) --edgefraction=F (0.001) --maxdegree=N (8)\n";

static int handle(void *ctx, int id, const char *v)
{
	int *fmt = ctx;
	switch (id) {
	case X_HEAPCHECK: fmt[1] = 1; return 0;
	case X_DOT: *fmt = F_DOT; return 0;
	case X_SVG: *fmt = F_SVG; return 0;
	case X_PDF: *fmt = F_PDF; return 0;
	case X_FORMAT:
		if (strcmp(v, "dot") == 0)
			*fmt = F_DOT;
		else if (strcmp(v, "svg") == 0)
			*fmt = F_SVG;
		else if (strcmp(v, "pdf") == 0)
			*fmt = F_PDF;
		else {
			fprintf(stderr, "heaptap: callgraph: --format: expected dot, svg or pdf, got '%s'\n"
			                "heaptap: try 'heaptap callgraph --help'\n", v);
			return 2;
		}
	}
	return 0;
}

/* Returns a malloc'd path of `dot` on $PATH, or NULL. */
static char *find_dot(void)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	char *dup = strdup(path), *save = NULL;
	if (!dup)
		return NULL;
	for (char *d = strtok_r(dup, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char *cand;
		if (asprintf(&cand, "%s/dot", *d ? d : ".") < 0)
			break;
		if (access(cand, X_OK) == 0) {
			free(dup);
			return cand;
		}
		free(cand);
	}
	free(dup);
	return NULL;
}

/* Runs `dot -T<type>` with stdin from in_fd and stdout to out_fd. Returns 0 or 1 (message printed). */
static int run_dot(const char *dot, const char *type, int in_fd, int out_fd)
{
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "heaptap: callgraph: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		char targ[16];
		snprintf(targ, sizeof(targ), "-T%s", type);
		if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0)
			_exit(127);
		memlimit_restore();
		char *args[] = {(char *)dot, targ, NULL};
		execv(dot, args);
		fprintf(stderr, "heaptap: callgraph: %s: %s\n", dot, strerror(errno));
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "heaptap: callgraph: waitpid: %s\n", strerror(errno));
			return 1;
		}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "heaptap: callgraph: %s -T%s failed (status %d)\n", dot, type,
		        WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		return 1;
	}
	return 0;
}

/* Pan and zoom for a standalone SVG: the wheel zooms around the pointer, a drag pans, a
   double click resets. Works on the viewBox, so dot's layout is untouched. */
static const char pan_zoom_js[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"(function () {\n"
	"  var svg = document.documentElement, vb = svg.viewBox.baseVal;\n"
	"  if (!vb) return;\n"
	"  var home = [vb.x, vb.y, vb.width, vb.height], drag = null;\n"
	"  function at(e) {\n"
	"    var p = svg.createSVGPoint(); p.x = e.clientX; p.y = e.clientY;\n"
	"    return p.matrixTransform(svg.getScreenCTM().inverse());\n"
	"  }\n"
	"  svg.addEventListener('wheel', function (e) {\n"
	"    e.preventDefault();\n"
	"    var k = e.deltaY < 0 ? 0.8 : 1.25, p = at(e);\n"
	"    vb.x = p.x - (p.x - vb.x) * k; vb.y = p.y - (p.y - vb.y) * k;\n"
	"    vb.width *= k; vb.height *= k;\n"
	"  }, {passive: false});\n"
	"  svg.addEventListener('mousedown', function (e) { drag = at(e); svg.style.cursor = 'move'; });\n"
	"  svg.addEventListener('mousemove', function (e) {\n"
	"    if (!drag) return;\n"
	"    var p = at(e); vb.x -= p.x - drag.x; vb.y -= p.y - drag.y;\n"
	"  });\n"
	"  window.addEventListener('mouseup', function () { drag = null; svg.style.cursor = ''; });\n"
	"  svg.addEventListener('dblclick', function () {\n"
	"    vb.x = home[0]; vb.y = home[1]; vb.width = home[2]; vb.height = home[3];\n"
	"  });\n"
	"})();\n"
	"]]></script>\n";

/* Copies dot's SVG from in_fd to out_fd, made to fill the browser window (width and height
   100%, the viewBox kept) with pan and zoom added. Returns 0 or 1 (message printed). */
static int rewrite_svg(int in_fd, int out_fd)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	for (ssize_t r; buf;) {
		if (n == cap) {
			char *nb = realloc(buf, cap * 2 + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(in_fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	if (!buf) {
		fprintf(stderr, "heaptap: callgraph: out of memory\n");
		return 1;
	}
	buf[n] = '\0';
	FILE *f = fdopen(dup(out_fd), "w");
	if (!f) {
		free(buf);
		fprintf(stderr, "heaptap: callgraph: %s\n", strerror(errno));
		return 1;
	}
	char *svg = strstr(buf, "<svg");
	char *end = svg ? strchr(svg, '>') : NULL;
	char *close = strstr(buf, "</svg>");
	if (!svg || !end || !close || close < end) {
		fwrite(buf, 1, n, f); /* not what dot usually writes: pass it on untouched */
	} else {
		fwrite(buf, 1, (size_t)(svg - buf), f);
		/* the <svg ...> tag with width/height replaced */
		for (char *p = svg; p <= end;) {
			if ((strncmp(p, " width=\"", 8) == 0 || strncmp(p, " height=\"", 9) == 0) && p < end) {
				int w = p[1] == 'w';
				char *q = strchr(p + (w ? 8 : 9), '"');
				if (q && q < end) {
					fputs(w ? " width=\"100%\"" : " height=\"100%\"", f);
					p = q + 1;
					continue;
				}
			}
			fputc(*p++, f);
		}
		fwrite(end + 1, 1, (size_t)(close - end - 1), f);
		fputs(pan_zoom_js, f);
		fputs(close, f);
	}
	free(buf);
	if (fclose(f) != 0) {
		fprintf(stderr, "heaptap: callgraph: write: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

int cmd_callgraph(int argc, char **argv)
{
	int fmtv[2] = {F_AUTO, 0}; /* format, --heapcheck */
	int fmt;
	static const struct common_opt opts[] = {{"format", 1, X_FORMAT}, {"dot", 0, X_DOT},
		{"svg", 0, X_SVG}, {"pdf", 0, X_PDF}, {"heapcheck", 0, X_HEAPCHECK}, {NULL, 0, 0}};
	struct common_extra ex = {.opts = opts, .handle = handle, .ctx = fmtv, .help = callgraph_help};
	struct common_args a;
	int rc = common_parse(&a, argc, argv, &ex);
	if (rc >= 0)
		return rc;
	fmt = fmtv[0];
	if (fmt == F_AUTO)
		fmt = a.output && ends_with(a.output, ".svg") ? F_SVG
		    : a.output && ends_with(a.output, ".pdf") ? F_PDF : F_DOT;
	char *dot = NULL;
	if (fmt != F_DOT && !(dot = find_dot())) {
		fprintf(stderr, "heaptap: callgraph: cannot make %s: Graphviz 'dot' is not on PATH "
		                "(apt-get install graphviz), or use --format=dot\n", fmt == F_SVG ? "svg" : "pdf");
		common_args_release(&a);
		return 1;
	}
	struct profile p;
	profile_init(&p);
	rc = common_load(&a, &p, 1);
	struct stacks s;
	int built = 0;
	if (rc == 0) {
		struct stacks_options so;
		stacks_options_from(&so, &a);
		rc = stacks_build(&s, &p, &so) ? 1 : 0;
		built = rc == 0;
	}
	int out_fd = 1;
	if (rc == 0 && a.output) {
		out_fd = open(a.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out_fd < 0) {
			fprintf(stderr, "heaptap: %s: %s\n", a.output, strerror(errno));
			rc = 1;
		}
	}
	if (rc == 0) {
		const char *prog = a.binary ? a.binary : p.exe_path ? p.exe_path : a.profiles[0];
		FILE *f;
		char tmpl[] = "/tmp/heaptap-dot-XXXXXX";
		int tfd = -1;
		if (fmt == F_DOT) {
			fflush(stdout);
			f = fdopen(dup(out_fd), "w");
		} else {
			tfd = mkstemp(tmpl);
			f = tfd >= 0 ? fdopen(dup(tfd), "w") : NULL;
			if (tfd >= 0)
				unlink(tmpl);
		}
		if (!f) {
			fprintf(stderr, "heaptap: callgraph: %s\n", strerror(errno));
			rc = 1;
		} else {
			int w = dot_write(f, &a, &s, prog, (fmt == F_SVG ? DOT_SVG : 0) | (fmtv[1] ? DOT_HEAPCHECK : 0));
			if (fclose(f) != 0 && w == 0)
				w = -1;
			if (w < 0) {
				fprintf(stderr, "heaptap: callgraph: write: %s\n", strerror(errno));
				rc = 1;
			} else if (w > 0) {
				rc = 1;
			} else if (fmt != F_DOT) {
				lseek(tfd, 0, SEEK_SET);
				if (fmt == F_PDF) {
					rc = run_dot(dot, "pdf", tfd, out_fd);
				} else {
					char sv[] = "/tmp/heaptap-svg-XXXXXX";
					int sfd = mkstemp(sv);
					if (sfd < 0) {
						fprintf(stderr, "heaptap: callgraph: %s\n", strerror(errno));
						rc = 1;
					} else {
						unlink(sv);
						rc = run_dot(dot, "svg", tfd, sfd);
						if (rc == 0) {
							lseek(sfd, 0, SEEK_SET);
							rc = rewrite_svg(sfd, out_fd);
						}
						close(sfd);
					}
				}
			}
		}
		if (tfd >= 0)
			close(tfd);
	}
	if (out_fd != 1 && out_fd >= 0 && close(out_fd) != 0 && rc == 0) {
		fprintf(stderr, "heaptap: %s: %s\n", a.output, strerror(errno));
		rc = 1;
	}
	if (built)
		stacks_release(&s);
	free(dot);
	profile_release(&p);
	common_args_release(&a);
	return rc;
}
