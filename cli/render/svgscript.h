/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * svgscript.h - the scripts and style sheets embedded in heaptap's SVG flame graphs and HTML
 * reports. The script defines htflameInit(svg): it reads the frames back from an
 * <svg class="htflame"> written by flame.c and wires hover details, click-to-zoom, Reset Zoom,
 * regex Search (highlight + "Matched: P%"), the ic (ignore case) toggle and, in a standalone
 * SVG, Ctrl-F / F3 and the view in the URL (?x=&y= zoom, ?s= search). After init the element has
 * .htflame = { zoom(i), unzoom(), search(re) -> percent, reset(), matched(), count(), frames }.
 * Static NUL-terminated strings; nothing allocates.
 */
#ifndef HEAPTAP_CLI_RENDER_SVGSCRIPT_H
#define HEAPTAP_CLI_RENDER_SVGSCRIPT_H

const char *svgscript_flame_js(void);
const char *svgscript_flame_css(void);
/* The report page's script (calls htflameInit for every graph, wires the search boxes and the
   chart's hover read-out from the JSON in <script id="ht-data">) and its style sheet. */
const char *svgscript_report_js(void);
const char *svgscript_report_css(void);

#endif
