# SPDX-License-Identifier: BSD-2-Clause
# cpu.sh - helpers for the CPU profiler's tests (sourced after common.sh): each reader's view
# of a CPU profile as "function cumulative" lines, and a check of one function's share.

# cpu_gotool BIN PROFILE OUT: go tool pprof's cumulative milliseconds per function.
cpu_gotool() {
	go tool pprof -top -unit=ms -nodecount=100000 -nodefraction=0 -edgefraction=0 \
		-symbolize=local "$1" "$2" >"$3.raw" 2>"$3.err" || { cat "$3.err"; return 1; }
	awk '$4 ~ /ms$/ { v = $4; sub(/ms$/, "", v); print $NF, v }' "$3.raw" >"$3"
}

# cpu_jeprof BIN PROFILE OUT [OPTIONS]: jeprof's cumulative samples per function (PROFILE may be
# a URL).
cpu_jeprof() {
	jeprof --text "${@:4}" "$1" "$2" >"$3.raw" 2>"$3.err" </dev/null || { cat "$3.err"; return 1; }
	awk 'NF >= 6 && $2 ~ /%$/ { print $6, $4 }' "$3.raw" >"$3"
}

# cpu_share OUT "FUNCS" "OF" LO HI: sum of FUNCS' values over the sum of OF's values lies in
# [LO, HI] (FUNCS, OF: space-separated names).
cpu_share() {
	python3 - "$@" <<'PY'
import sys
path, funcs, of, lo, hi = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), float(sys.argv[4]), float(sys.argv[5])
v = {}
for line in open(path):
    f = line.split()
    if len(f) == 2:
        v[f[0]] = float(f[1])
num = sum(v.get(x, 0) for x in funcs)
den = sum(v.get(x, 0) for x in of)
share = num / den if den else 0
ok = lo <= share <= hi
print("%s: %s / (%s) = %.3f, expected %.2f..%.2f: %s" % (path.split('/')[-1], "+".join(funcs), "+".join(of), share, lo, hi, "ok" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
}
