#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/e2e/report_series.sh - `heaptap report` over a real series of dumps of
# tests/progs/report_slowleak (leak_slowly leaks ~1 MiB/s; keep_flat_a/keep_flat_b hold flat
# pools while churning as much). Series from jemalloc's profiler (interval dumps) and, when the
# collector writes dumps, from heaptap itself (prof_time_interval:200ms), also converted to pprof.
# Checks that the report names leak_slowly as the top (and only) leak suspect, its slope is within
# a factor 1.5 of the true leak rate (~180 blocks of 16 KiB at a 16 KiB period: the leaked total
# has a sampling error of sqrt((1-p)/(N p)) = 5.7% with p = 1-1/e, the fitted slope about 8%, so
# 1.5 is more than 6 sigma), the flat functions are not suspects, and the page is self-contained
# (no external URL, both flame graphs, chart data, facts).
. "$(dirname "$0")/lib/test.sh"
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
PROG=$HEAPTAP_BUILD/progs/report_slowleak
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }
[ -x "$PROG" ] || { echo "FAIL: $PROG not built (make progs)"; exit 1; }
ran=0

check_report() { # name, program output, report
	python3 - "$@" <<'EOF'
import re, sys
name, progout, path = sys.argv[1:4]
s = open(path, encoding='utf-8').read()
bad = []
m = re.search(r'leaked (\d+) bytes', open(progout).read())
leaked = int(m.group(1))
tbl = re.search(r'<table class="data" id="suspects">(.*?)</table>', s, re.S)
if not tbl:
    bad.append('no suspects table')
else:
    rows = re.findall(r'<tr class="suspect" data-site="([^"]*)">(.*?)</tr>', tbl.group(1), re.S)
    sites = [r[0] for r in rows]
    print(name, 'suspects:', sites)
    if not sites or sites[0] != 'leak_slowly':
        bad.append('top suspect is %r, not leak_slowly' % (sites[:1],))
    for flat in ('keep_flat_a', 'keep_flat_b', 'main'):
        if flat in sites:
            bad.append('%s is a suspect' % flat)
    if rows:
        cells = re.findall(r'<td class="num">([^<]*)</td>', rows[0][1])
        rate = cells[0]
        mm = re.match(r'\+([\d.]+) (B|KiB|MiB)/s', rate)
        if not mm:
            bad.append('slope cell %r' % rate)
        else:
            v = float(mm.group(1)) * {'B': 1, 'KiB': 1024, 'MiB': 1 << 20}[mm.group(2)]
            # the program leaks at a constant rate over its whole run of 3 s
            dur = 3.0
            truth = leaked / dur
            print(name, 'slope %.0f B/s, truth about %.0f B/s (leaked %d over %.2f s)' % (v, truth, leaked, dur))
            if not (truth / 1.5 <= v <= truth * 1.5):
                bad.append('slope %.0f B/s vs truth %.0f B/s' % (v, truth))
        r2 = float(cells[3])
        if r2 < 0.8:
            bad.append('suspect R2 %.3f < 0.8' % r2)
sites_tbl = re.search(r'<table class="data" id="suspect-sites">(.*?)</table>', s, re.S)
site_rows = re.findall(r'data-site="([^"]*)"', sites_tbl.group(1)) if sites_tbl else None
print(name, 'suspect sites:', site_rows)
if not site_rows or site_rows[0] != 'leak_slowly' or any(f in site_rows for f in ('keep_flat_a', 'keep_flat_b')):
    bad.append('suspect sites %r' % (site_rows,))
for ident in ('id="flame-peak"', 'id="flame-diff"', 'id="chart"', 'id="ht-data"', 'id="facts"', 'id="growers"'):
    if ident not in s:
        bad.append('missing ' + ident)
# self-contained: nothing is fetched (the SVG namespace name is not a fetch)
for u in re.findall(r'(?:src|href|url)\s*[=(]\s*["\']?(?:https?:)?//[^"\')\s]*', s):
    bad.append('external reference: ' + u)
if re.search(r'<(?:link|img|iframe)\b', s):
    bad.append('external element')
if 'lg_prof_sample:14' not in s:
    bad.append('facts lack the sampling period')
for b in bad:
    print('FAIL:', name, b)
sys.exit(1 if bad else 0)
EOF
}

# 1. jemalloc's profiler: an interval dump every MiB allocated (~4 a second), plus the final one.
if [ -r "$JE" ]; then
	mkdir "$TMP/je"
	MALLOC_CONF=prof:true,lg_prof_interval:20,lg_prof_sample:14,prof_final:true,prof_prefix:$TMP/je/jp \
		LD_PRELOAD=$JE "$PROG" 3 >"$TMP/je.out" || { echo "FAIL: report_slowleak under jemalloc exited $?"; exit 1; }
	n=$(ls "$TMP"/je/*.heap | wc -l)
	echo "jemalloc: $n dumps"
	if "$HEAPTAP" report "$PROG" "$TMP"/je/*.heap -o "$TMP/je.html"; then
		check_report jemalloc "$TMP/je.out" "$TMP/je.html" || fail=1
	else
		echo "FAIL: heaptap report (jemalloc series) exited $?"; fail=1
	fi
	ran=1
else
	echo "note: jemalloc is not installed; skipping the jemalloc series"
fi

# 2. heaptap's collector: a dump every 200 ms.
if [ -r "$HEAPTAP_LIB" ]; then
	mkdir "$TMP/ht"
	HEAPTAP_CONF=prof_time_interval:200ms,lg_prof_sample:14,prof_prefix:$TMP/ht/ht LD_PRELOAD=$HEAPTAP_LIB \
		"$PROG" 3 >"$TMP/ht.out" 2>"$TMP/ht.err"
	rc=$?
	n=$(ls "$TMP"/ht/*.heap 2>/dev/null | wc -l)
	echo "heaptap collector: exit $rc, $n dumps"
	if [ $rc -eq 0 ] && [ "$n" -ge 5 ]; then
		if "$HEAPTAP" report "$PROG" "$TMP"/ht/*.heap -o "$TMP/ht.html"; then
			check_report heaptap "$TMP/ht.out" "$TMP/ht.html" || fail=1
		else
			echo "FAIL: heaptap report (heaptap series) exited $?"; fail=1
		fi
		# the same series as pprof files (time from time_nanos, order from the names)
		mkdir "$TMP/pb"
		for f in "$TMP"/ht/*.heap; do
			b=${f##*/}
			"$HEAPTAP_PLAIN" pprof "$PROG" "$f" -o "$TMP/pb/${b%.heap}.pb.gz" || { echo "FAIL: heaptap pprof $f"; fail=1; }
		done
		if "$HEAPTAP" report "$TMP"/pb/*.pb.gz -o "$TMP/pb.html"; then
			check_report pprof "$TMP/ht.out" "$TMP/pb.html" || fail=1
		else
			echo "FAIL: heaptap report (pprof series) exited $?"; fail=1
		fi
		ran=1
	else
		echo "note: the collector wrote no time series yet (its own tests cover it); stderr:"
		head -n 5 "$TMP/ht.err"
	fi
fi
[ $ran -eq 1 ] || { echo "neither jemalloc nor the heaptap collector can produce a series"; exit 77; }

# usage errors
"$HEAPTAP" report >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: report without dumps exited $rc, want 2"; fail=1; }
"$HEAPTAP" report "$TMP/nope.heap" >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: report of a missing dump exited $rc, want 1"; fail=1; }
[ $fail -eq 0 ] && echo "report_series: ok"
exit $fail
