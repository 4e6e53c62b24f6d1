/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graphviz.c - runs Graphviz's `dot` on the call graph dot.c writes (see graphviz.h): to a
 * temporary file, `dot -T<format>` into the output, and for SVG a pass that makes the picture
 * fill the window and adds pan and zoom. It neither builds the graph nor loads profiles.
 */
#include "graphviz.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../mapfile.h"
#include "../memlimit.h"
#include "dot.h"

/* One row per format: its name (also the extension and dot's -T type). */
static const char *const format_names[GRAPHVIZ_NFORMATS] = {"dot", "svg", "pdf", "ps", "gif", "png"};

int graphviz_format_parse(const char *name)
{
	for (int i = 0; i < GRAPHVIZ_NFORMATS; i++)
		if (strcmp(name, format_names[i]) == 0)
			return i;
	return -1;
}

int graphviz_format_from_path(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *dot = strrchr(slash ? slash : path, '.');
	if (!dot || !dot[1])
		return -1;
	if (strcasecmp(dot + 1, "gv") == 0)
		return GRAPHVIZ_DOT;
	for (int i = 0; i < GRAPHVIZ_NFORMATS; i++)
		if (strcasecmp(dot + 1, format_names[i]) == 0)
			return i;
	return -1;
}

const char *graphviz_format_name(int format)
{
	return format >= 0 && format < GRAPHVIZ_NFORMATS ? format_names[format] : "?";
}

const char *graphviz_extensions(void)
{
	return ".dot .svg .pdf .ps .gif .png";
}

char *graphviz_find_dot(void)
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
static int run_dot(const char *cmd, const char *dot, const char *type, int in_fd, int out_fd)
{
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "heaptap: %s: fork: %s\n", cmd, strerror(errno));
		return 1;
	}
	if (pid == 0) {
		char targ[16];
		snprintf(targ, sizeof(targ), "-T%s", type);
		if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0)
			_exit(127);
		memlimit_restore(); /* dot gets the memory limit the user had, not ours */
		char *args[] = {(char *)dot, targ, NULL};
		execv(dot, args);
		fprintf(stderr, "heaptap: %s: %s: %s\n", cmd, dot, strerror(errno));
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "heaptap: %s: waitpid: %s\n", cmd, strerror(errno));
			return 1;
		}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "heaptap: %s: %s -T%s failed (status %d)\n", cmd, dot, type,
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
static int rewrite_svg(const char *cmd, int in_fd, int out_fd)
{
	size_t n = 0;
	char *buf = mapfile_read_fd(in_fd, &n);
	if (!buf) {
		fprintf(stderr, "heaptap: %s: reading dot's output: %s\n", cmd, strerror(errno));
		return 1;
	}
	FILE *f = fdopen(dup(out_fd), "w");
	if (!f) {
		free(buf);
		fprintf(stderr, "heaptap: %s: %s\n", cmd, strerror(errno));
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
		fprintf(stderr, "heaptap: %s: write: %s\n", cmd, strerror(errno));
		return 1;
	}
	return 0;
}


int graphviz_write(int out_fd, const struct common_args *a, const struct stacks *s, const char *prog,
                   int format, int heapcheck, const char *cmd)
{
	char *dot = NULL;
	if (format != GRAPHVIZ_DOT && !(dot = graphviz_find_dot())) {
		fprintf(stderr, "heaptap: %s: cannot make %s: Graphviz 'dot' is not on PATH "
		                "(apt-get install graphviz), or use --format=dot\n", cmd, graphviz_format_name(format));
		return 1;
	}
	int rc = 0;
	FILE *f;
	char tmpl[] = "/tmp/heaptap-dot-XXXXXX";
	int tfd = -1;
	if (format == GRAPHVIZ_DOT) {
		fflush(stdout);
		f = fdopen(dup(out_fd), "w");
	} else {
		tfd = mkstemp(tmpl);
		f = tfd >= 0 ? fdopen(dup(tfd), "w") : NULL;
		if (tfd >= 0)
			unlink(tmpl);
	}
	if (!f) {
		fprintf(stderr, "heaptap: %s: %s\n", cmd, strerror(errno));
		rc = 1;
	} else {
		int w = dot_write(f, a, s, prog, (format == GRAPHVIZ_SVG ? DOT_SVG : 0) | (heapcheck ? DOT_HEAPCHECK : 0));
		if (fclose(f) != 0 && w == 0)
			w = -1;
		if (w < 0) {
			fprintf(stderr, "heaptap: %s: write: %s\n", cmd, strerror(errno));
			rc = 1;
		} else if (w > 0) {
			rc = 1;
		} else if (format == GRAPHVIZ_SVG) {
			lseek(tfd, 0, SEEK_SET);
			char sv[] = "/tmp/heaptap-svg-XXXXXX";
			int sfd = mkstemp(sv);
			if (sfd < 0) {
				fprintf(stderr, "heaptap: %s: %s\n", cmd, strerror(errno));
				rc = 1;
			} else {
				unlink(sv);
				rc = run_dot(cmd, dot, "svg", tfd, sfd);
				if (rc == 0) {
					lseek(sfd, 0, SEEK_SET);
					rc = rewrite_svg(cmd, sfd, out_fd);
				}
				close(sfd);
			}
		} else if (format != GRAPHVIZ_DOT) {
			lseek(tfd, 0, SEEK_SET);
			rc = run_dot(cmd, dot, graphviz_format_name(format), tfd, out_fd);
		}
	}
	if (tfd >= 0)
		close(tfd);
	free(dot);
	return rc;
}
