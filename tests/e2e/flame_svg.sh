#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/e2e/flame_svg.sh - `heaptap flame` on real dumps: runs tests/progs/report_slowleak under
# jemalloc's profiler (interval dumps + a final one), renders flame graphs and parses them as XML.
# Checks: the root frame says the profile total that `heaptap top` prints and spans the full
# width (within a pixel); leak_slowly's frame width is its share from `heaptap top` (within a
# pixel); the differential graph (--base first dump) colours the grown leak_slowly red and says
# what it shows; --inverted puts the root on top; --colors=hot, --minwidth=N%, --title and
# --countname act; inlined frames (tests/progs/sym_inline.c at -O2) are marked " [inline]" with
# class inl and carry their own file:line; bad options exit 2 and a missing file exits 1.
. "$(dirname "$0")/lib/test.sh"
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
PROG=$HEAPTAP_BUILD/progs/report_slowleak
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }
[ -r "$JE" ] || { echo "jemalloc ($JE) is not installed"; exit 77; }
[ -x "$PROG" ] || { echo "FAIL: $PROG not built (make progs)"; exit 1; }

MALLOC_CONF=prof:true,lg_prof_interval:20,lg_prof_sample:14,prof_final:true,prof_prefix:$TMP/jp \
	LD_PRELOAD=$JE "$PROG" 1.5 >"$TMP/prog.out" || { echo "FAIL: report_slowleak exited $?"; exit 1; }
first=$(ls "$TMP"/jp.*.i*.heap 2>/dev/null | sort -t. -k3,3n | head -n 1)
last=$(ls "$TMP"/jp.*.f.heap 2>/dev/null | head -n 1)
[ -n "$first" ] && [ -n "$last" ] || { echo "FAIL: jemalloc wrote no interval/final dumps"; ls "$TMP"; exit 1; }
echo "dumps: $(ls "$TMP"/jp.*.heap | wc -l), base $first, final $last"

"$HEAPTAP" top --show_bytes "$PROG" "$last" >"$TMP/top.txt" || { echo "FAIL: heaptap top exited $?"; exit 1; }
"$HEAPTAP" flame "$PROG" "$last" -o "$TMP/f.svg" || { echo "FAIL: heaptap flame exited $?"; exit 1; }
"$HEAPTAP" flame --base "$first" "$PROG" "$last" -o "$TMP/d.svg" || { echo "FAIL: flame --base exited $?"; exit 1; }
"$HEAPTAP" flame --inverted --colors=hot --title='Hot <test>' --countname=octets "$PROG" "$last" >"$TMP/i.svg" ||
	{ echo "FAIL: flame --inverted exited $?"; exit 1; }
"$HEAPTAP" flame --minwidth=20% "$PROG" "$last" -o "$TMP/m.svg" || { echo "FAIL: flame --minwidth exited $?"; exit 1; }

python3 - "$TMP" <<'EOF' || fail=1
import re, sys
import xml.etree.ElementTree as ET
d = sys.argv[1]
NS = '{http://www.w3.org/2000/svg}'
bad = []

def frames(path):
    root = ET.parse(path).getroot()
    out = []
    for g in root.iter(NS + 'g'):
        if g.get('class') == 'frames':
            for f in g:
                tip = f.find(NS + 'title').text
                r = f.find(NS + 'rect')
                out.append(dict(tip=tip, name=tip.split('\n')[0].rsplit(' (', 1)[0],
                                x=float(r.get('x')), y=float(r.get('y')), w=float(r.get('width')),
                                fill=r.get('fill'), label=f.find(NS + 'text').text or ''))
    return root, out

def rgb(s):
    return tuple(int(v) for v in re.match(r'rgb\((\d+),(\d+),(\d+)\)', s).groups())

top = open(d + '/top.txt').read()
total = int(re.search(r'^Total: (\d+) B', top, re.M).group(1))
cum = None
for line in top.splitlines()[1:]:
    f = line.split()
    if len(f) >= 6 and f[5] == 'leak_slowly':
        cum = int(f[3])
if cum is None:
    bad.append('heaptap top has no leak_slowly row:\n' + top)

root, fr = frames(d + '/f.svg')
W = float(root.get('width'))
allf = fr[0]
m = re.match(r'all \(([\d,]+) bytes, 100.00%\)', allf['tip'])
if not m:
    bad.append('root tooltip: %r' % allf['tip'])
else:
    n = int(m.group(1).replace(',', ''))
    if abs(n - total) > 1:
        bad.append('root says %d bytes, heaptap top total %d' % (n, total))
if abs(allf['w'] - (W - 20)) > 1:
    bad.append('root width %.2f, expected %.0f' % (allf['w'], W - 20))
leak = [f for f in fr if f['name'] == 'leak_slowly']
if len(leak) != 1:
    bad.append('expected one leak_slowly frame, got %d' % len(leak))
elif cum is not None:
    share = cum / total
    ratio = leak[0]['w'] / allf['w']
    print('leak_slowly: top share %.4f, flame width ratio %.4f (%.2f px of %.2f)' % (share, ratio, leak[0]['w'], allf['w']))
    if abs(ratio - share) * allf['w'] > 1:
        bad.append('leak_slowly width ratio %.4f != top share %.4f' % (ratio, share))
    if not re.search(r'\nat .*report_slowleak\.c:\d+', leak[0]['tip']):
        bad.append('leak_slowly tooltip lacks file:line: %r' % leak[0]['tip'])
    g = rgb(leak[0]['fill'])
    if not (g[1] > g[0]):
        bad.append('mem palette should be green/blue: %r' % (g,))
# every frame fits inside its parent level: children of the root sum to at most the root
kids = [f for f in fr if abs(f['y'] - (allf['y'] - 16)) < 0.01]
if sum(k['w'] for k in kids) > allf['w'] + 0.05:
    bad.append('children wider than the root')

# differential: widths from the last dump, leak_slowly grew from 0: saturated red
root, fr = frames(d + '/d.svg')
leak = [f for f in fr if f['name'] == 'leak_slowly']
if len(leak) != 1:
    bad.append('diff: expected one leak_slowly frame, got %d' % len(leak))
else:
    c = rgb(leak[0]['fill'])
    print('diff leak_slowly fill', c, repr(leak[0]['tip']))
    if not (c[0] == 255 and c[1] == c[2] and c[1] < 60):
        bad.append('diff: leak_slowly is not red: %r' % (c,))
    if 'base 0 bytes' not in leak[0]['tip'] or 'delta +' not in leak[0]['tip']:
        bad.append('diff tooltip: %r' % leak[0]['tip'])
sub = [t.text for t in root.iter(NS + 'text') if t.get('class') == 'subtitle']
if not sub or 'only in the base are not shown' not in sub[0]:
    bad.append('diff subtitle: %r' % sub)

# inverted + hot + title + countname
root, fr = frames(d + '/i.svg')
if fr[0]['y'] >= min(f['y'] for f in fr[1:]):
    bad.append('inverted: root is not on top')
title = [t.text for t in root.iter(NS + 'text') if t.get('class') == 'title']
if title != ['Hot <test>']:
    bad.append('title: %r' % title)
if not fr[0]['tip'].endswith(' octets, 100.00%)'):
    bad.append('countname: %r' % fr[0]['tip'])
leak = [f for f in fr if f['name'] == 'leak_slowly']
if leak:
    c = rgb(leak[0]['fill'])
    if not (c[0] >= 200 and c[2] <= 60):
        bad.append('hot palette: %r' % (c,))

# minwidth 20%: only frames of >= 20% of the total are drawn
root, fr = frames(d + '/m.svg')
small = [f for f in fr if f['w'] < 0.2 * fr[0]['w'] - 0.01]
if small or len(fr) < 2:
    bad.append('minwidth 20%%: %d frames narrower drawn, %d frames' % (len(small), len(fr)))

for b in bad:
    print('FAIL:', b)
sys.exit(1 if bad else 0)
EOF

# Inline frames: sym_inline.c at -O2 (raw <- grab inlined into first_site / second_site), every
# allocation recorded and accumulated, so --alloc_space sees them although they are freed.
src=$ROOT/tests/progs/sym_inline.c
if gcc -O2 -g -o "$TMP/inl" "$src"; then
	rm -f "$TMP"/jp.*
	MALLOC_CONF=prof:true,lg_prof_sample:0,prof_accum:true,prof_final:true,prof_prefix:$TMP/jp \
		LD_PRELOAD=$JE "$TMP/inl" >/dev/null || { echo "FAIL: sym_inline exited $?"; fail=1; }
	"$HEAPTAP" flame --alloc_space --minwidth=0 "$TMP/inl" "$TMP"/jp.*.f.heap -o "$TMP/inl.svg" ||
		{ echo "FAIL: flame of the inline program exited $?"; fail=1; }
	python3 - "$TMP/inl.svg" "$src" <<'EOF2' || fail=1
import sys
import xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'
svg, src = sys.argv[1:3]
lines = open(src).read().split('\n')
mark = {m: next(i + 1 for i, l in enumerate(lines) if 'MARK_' + m in l) for m in ('RAW', 'GRAB')}
bad = []
fr = []
for g in ET.parse(svg).getroot().iter(NS + 'g'):
    if g.get('class') == 'frames':
        for f in g:
            r = f.find(NS + 'rect')
            fr.append((f.find(NS + 'title').text, f.get('class'), float(r.get('x')), float(r.get('y')),
                       f.find(NS + 'text').text or ''))
for site in ('first_site', 'second_site'):
    s = [f for f in fr if f[0].startswith(site + ' (')]
    grab = [f for f in fr if f[0].startswith('grab [inline] (') and s and abs(f[2] - s[0][2]) < 0.01
            and abs(f[3] - (s[0][3] - 16)) < 0.01]
    raw = [f for f in fr if f[0].startswith('raw [inline] (') and grab and abs(f[2] - grab[0][2]) < 0.01
           and abs(f[3] - (grab[0][3] - 16)) < 0.01]
    if len(s) != 1 or len(grab) != 1 or len(raw) != 1:
        bad.append('%s: expected %s <- grab [inline] <- raw [inline], got %d/%d/%d' % (site, site, len(s), len(grab), len(raw)))
        continue
    for name, f, m in (('grab', grab[0], 'GRAB'), ('raw', raw[0], 'RAW')):
        if f[1] != 'inl':
            bad.append('%s under %s is not marked inline (class %r)' % (name, site, f[1]))
        if not f[0].endswith('sym_inline.c:%d' % mark[m]):
            bad.append('%s under %s: tooltip %r lacks sym_inline.c:%d' % (name, site, f[0], mark[m]))
    print(site, 'ok:', repr(raw[0][0]))
for b in bad:
    print('FAIL:', b)
sys.exit(1 if bad else 0)
EOF2
else
	echo "note: gcc could not build $src; inline frames not checked"
fi

"$HEAPTAP" flame --colors=nope "$last" >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: unknown palette exited $rc, want 2"; fail=1; }
"$HEAPTAP" flame --minwidth=abc "$last" >/dev/null 2>>"$TMP/err"
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: bad --minwidth exited $rc, want 2"; fail=1; }
"$HEAPTAP" flame "$TMP/missing.heap" >/dev/null 2>>"$TMP/err"
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: missing file exited $rc, want 1"; fail=1; }
grep -q '^heaptap: .*missing.heap' "$TMP/err" || { echo "FAIL: missing file message"; cat "$TMP/err"; fail=1; }
[ $fail -eq 0 ] && echo "flame_svg: ok"
exit $fail
