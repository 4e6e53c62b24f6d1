/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * graphviz.h - the call graph of render/dot.h turned into a picture by Graphviz's `dot`: SVG
 * (made to fill the browser window, with pan and zoom), PDF, PostScript, GIF and PNG, or the
 * dot text itself. It chooses formats by name or file extension and runs `dot`; the graph's
 * content is dot.c's. CLI only: allocates, forks, prints "heaptap: <cmd>: ..." on failure.
 */
#ifndef HEAPTAP_CLI_RENDER_GRAPHVIZ_H
#define HEAPTAP_CLI_RENDER_GRAPHVIZ_H

#include "../common.h"
#include "../stacks.h"

enum graphviz_format {
	GRAPHVIZ_DOT = 0,
	GRAPHVIZ_SVG,
	GRAPHVIZ_PDF,
	GRAPHVIZ_PS,
	GRAPHVIZ_GIF,
	GRAPHVIZ_PNG,
	GRAPHVIZ_NFORMATS
};

/* The format named "dot", "svg", "pdf", "ps", "gif" or "png"; -1 for anything else. */
int graphviz_format_parse(const char *name);
/* The format of a file name's extension (.dot .gv .svg .pdf .ps .gif .png, any case); -1 when
   it has none of them. */
int graphviz_format_from_path(const char *path);
/* "dot", "svg", ... */
const char *graphviz_format_name(int format);
/* The list of extensions, for messages: ".dot .svg .pdf .ps .gif .png". */
const char *graphviz_extensions(void);

/* The path of `dot` on $PATH (malloc'd), or NULL. */
char *graphviz_find_dot(void);

/*
 * Writes the call graph of s (dot_write's rules; heapcheck: DOT_HEAPCHECK) to out_fd in the
 * given format, running `dot -T<format>` for all but GRAPHVIZ_DOT. prog names the program in
 * the graph's title. cmd names the command in messages. Returns 0, or 1 after a message
 * (no `dot` on PATH, no node left, `dot` failed, a write error).
 */
int graphviz_write(int out_fd, const struct common_args *a, const struct stacks *s, const char *prog,
                   int format, int heapcheck, const char *cmd);

#endif
