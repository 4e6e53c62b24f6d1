#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""accuracy.py - compares heap-profile reports (jeprof --text, go tool pprof -top) with the exact
truth a known-truth program (tests/progs/truth_*.c/.cc) writes, using the sampling math of
docs/DESIGN.md. It is a test helper: it reads text reports and prints a verdict; it does not
run programs or profilers (the shell scripts do that), and it never reads dumps except to
convert a heap_v2 file into the legacy text Go pprof reads (validation against jemalloc).

Subcommands (exit 0 = pass, 1 = fail, 2 = usage):
  exact   --kind jeprof|pprof --mode req|usable [--tol 0.005] [--col flat|cum]
          [--value live|alloc] TRUTH REPORT
  sampled --kind jeprof|pprof --mode req|usable --period R [--min-mean-bytes 8388608]
          [--mean-tol 0.05] [--mean-sigmas 4.5] [--col flat|cum] TRUTH1 REPORT1 [TRUTH2 ...]
  heapv2-to-legacy DUMP            (writes the gperftools text form of a heap_v2 dump to stdout)
  sigma   --period R COUNTxSIZE[+COUNTxSIZE...]   (prints sigma and relative sigma of a site)
"""
import argparse
import math
import re
import sys

# ---------------------------------------------------------------- parsing


def parse_truth(path):
    """Returns {name: {'req':, 'usable':, 'col':, 'objs': [(count, size)]}} in file order."""
    sites = {}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            if parts[0] != "site" or len(parts) < 3:
                raise SystemExit(f"accuracy: {path}:{lineno}: not a site line")
            site = {"col": "flat", "objs": []}
            for kv in parts[2:]:
                k, _, v = kv.partition("=")
                if k in ("req", "usable", "alloc", "alloc_usable"):
                    site[k] = int(v)
                elif k == "col":
                    site[k] = v
                elif k == "objs":
                    for term in v.split("+"):
                        c, _, s = term.partition("x")
                        if int(c) > 0:
                            site["objs"].append((int(c), int(s)))
            sites[parts[1]] = site
    return sites


UNITS = {"B": 1, "kB": 1024, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3, "TB": 1024 ** 4, "": 1}


def _num(tok):
    m = re.fullmatch(r"(-?[0-9.]+(?:e[+-]?[0-9]+)?)([A-Za-z]*)", tok)
    if not m or m.group(2) not in UNITS:
        raise ValueError(tok)
    return float(m.group(1)) * UNITS[m.group(2)]


def parse_report(path, kind):
    """Returns {function: (flat, cum)} from `jeprof --text --show_bytes` or `go tool pprof -top
    -unit=B` output. Function names are kept whole (C++ names may hold spaces)."""
    rows = {}
    started = False
    with open(path) as f:
        for line in f:
            if kind == "jeprof" and line.startswith("Total:"):
                started = True
                continue
            if kind == "pprof" and re.match(r"\s*flat\s+flat%\s+sum%\s+cum\s+cum%", line):
                started = True
                continue
            if not started:
                continue
            parts = line.split(None, 5)
            if len(parts) < 6:
                continue
            try:
                flat, cum = _num(parts[0]), _num(parts[3])
            except ValueError:
                continue
            name = parts[5].strip()
            old = rows.get(name, (0.0, 0.0))
            rows[name] = (old[0] + flat, max(old[1], cum))
    if not started:
        raise SystemExit(f"accuracy: {path}: no {kind} report table found")
    return rows


def site_estimate(rows, name, col):
    """Sums the rows whose function is `name` or `name(...)`/`name ...` (C++ signatures)."""
    idx = 0 if col == "flat" else 1
    total = 0.0
    found = False
    for fn, vals in rows.items():
        if fn == name or fn.startswith(name + "(") or fn.startswith(name + " "):
            total += vals[idx]
            found = True
    return total, found


# ---------------------------------------------------------------- sampling math


def p_sample(size, period):
    """Probability that an allocation of `size` bytes is sampled with mean interval `period`."""
    if period <= 1:
        return 1.0
    return -math.expm1(-size / period)


def site_sigma(objs, period):
    """Standard error of the unbiased estimate: Var = sum n s^2 (1-p)/p (docs/DESIGN.md)."""
    var = 0.0
    for n, s in objs:
        p = p_sample(s, period)
        var += n * s * s * (1 - p) / p
    return math.sqrt(var)


def _binom_window(n, p, width=14.0):
    """{k: P(K = k)} for K ~ Binomial(n, p), over the window where the mass is."""
    if p >= 1.0:
        return {n: 1.0}
    mean, sd = n * p, math.sqrt(n * p * (1 - p))
    lo, hi = max(0, int(mean - width * sd - 12)), min(n, int(mean + width * sd + 12))
    lp, lq = math.log(p), math.log1p(-p)
    out = {}
    for k in range(lo, hi + 1):
        lg = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * lp + (n - k) * lq
        if lg > -60:
            out[k] = math.exp(lg)
    return out


_dist_cache = {}


def site_distribution(objs, period):
    """Exact distribution of the estimate sum_k k_i * s_i / p_i, as a sorted [(value, prob)]."""
    key = (tuple(objs), period)
    if key in _dist_cache:
        return _dist_cache[key]
    dist = {0.0: 1.0}
    for n, s in objs:
        p = p_sample(s, period)
        w = s / p
        nxt = {}
        for k, pk in _binom_window(n, p).items():
            for v, pv in dist.items():
                pr = pk * pv
                if pr > 1e-300:
                    nv = v + k * w
                    nxt[nv] = nxt.get(nv, 0.0) + pr
        dist = nxt
    out = sorted(dist.items())
    _dist_cache[key] = out
    return out


def acceptance(objs, period, truth, sigma, tail=5e-8):
    """Returns (lo, hi, p3): the interval holding all but `tail` of the probability on each side,
    and the probability that an estimate lies more than 3 sigma from the truth."""
    dist = site_distribution(objs, period)
    acc, lo = 0.0, dist[0][0]
    for v, pr in dist:
        if acc + pr > tail:
            lo = v
            break
        acc += pr
    acc, hi = 0.0, dist[-1][0]
    for v, pr in reversed(dist):
        if acc + pr > tail:
            hi = v
            break
        acc += pr
    p3 = sum(pr for v, pr in dist if abs(v - truth) > 3 * sigma + 1e-9)
    return lo, hi, p3


def poisson_quantile(lam, tail):
    """Smallest t with P(X > t) < tail for X ~ Poisson(lam)."""
    t, pmf, cdf = 0, math.exp(-lam), math.exp(-lam)
    while 1 - cdf >= tail:
        t += 1
        pmf *= lam / t
        cdf += pmf
    return t


# ---------------------------------------------------------------- commands


def fmt_mib(b):
    return f"{b / 1048576:9.3f} MiB"


def cmd_exact(a):
    truth = parse_truth(a.truth)
    if a.value == "alloc":
        # Cumulative bytes (prof_accum, jeprof --alloc_space): the alloc columns instead.
        key = "alloc" if a.mode == "req" else "alloc_usable"
        truth = {n: dict(s, **{a.mode: s[key]}) for n, s in truth.items() if key in s}
    rows = parse_report(a.report, a.kind)
    total = sum(s[a.mode] for s in truth.values())
    bad = 0
    print(f"{'site':<24} {'truth':>14} {'estimate':>14} {'error':>9}  verdict")
    for name, s in truth.items():
        t = s[a.mode]
        est, found = site_estimate(rows, name, a.col or s["col"])
        if t > 0:
            err = (est - t) / t
            ok = found and abs(err) <= a.tol
            verdict = "ok" if ok else ("MISSING" if not found else f"OFF (> {a.tol:.2%})")
            print(f"{name:<24} {fmt_mib(t)} {fmt_mib(est)} {err:+9.4%}  {verdict}")
        else:
            ok = est <= 0.001 * total
            verdict = "ok (~0 live)" if ok else "LIVE BYTES where none are live"
            print(f"{name:<24} {fmt_mib(t)} {fmt_mib(est)} {'':>9}  {verdict}")
        bad += not ok
    print(f"{len(truth) - bad} of {len(truth)} sites within {a.tol:.2%} of the truth")
    return 1 if bad else 0


def cmd_sampled(a):
    if len(a.files) % 2 or not a.files:
        print("accuracy: sampled wants TRUTH REPORT pairs", file=sys.stderr)
        return 2
    runs = []
    for i in range(0, len(a.files), 2):
        runs.append((parse_truth(a.files[i]), parse_report(a.files[i + 1], a.kind)))
    K = len(runs)
    R = a.period
    names = list(runs[0][0].keys())
    bad = 0
    nchecks, nover3, lam = 0, 0, 0.0
    print(f"period R = {R} bytes, K = {K} runs; per run: every site inside its exact 1e-7 "
          f"acceptance interval; count of |z| > 3 bounded; mean of sites >= "
          f"{fmt_mib(a.min_mean_bytes).strip()} within {a.mean_tol:.0%} (>= {a.mean_sigmas:g} sigma of the mean)")
    print(f"{'site':<16} {'truth':>14} {'sigma':>10} {'rel.sig':>8} {'z min':>7} {'z max':>7} "
          f"{'mean':>14} {'mean err':>9} {'k*sig/vK':>10}  verdict")
    for name in names:
        ests, truths = [], []
        zs = []
        problems = []
        for run, (truth, rows) in enumerate(runs):
            s = truth.get(name)
            if s is None:
                problems.append(f"run {run}: site missing from truth")
                continue
            t = s[a.mode]
            objs = s["objs"]
            est, found = site_estimate(rows, name, a.col or s["col"])
            ests.append(est)
            truths.append(t)
            if t == 0:
                total = sum(x[a.mode] for x in truth.values())
                if est > 0.001 * total:
                    problems.append(f"run {run}: {est:.0f} bytes live where none are")
                continue
            if a.mode == "usable":
                # jemalloc samples usable sizes; scale the model's sizes to them.
                f = t / s["req"] if s["req"] else 1.0
                objs = [(n, sz * f) for n, sz in objs]
            sigma = site_sigma(objs, R)
            lo, hi, p3 = acceptance(objs, R, t, sigma)
            # Printing rounds: heaptap's pre-compensated counts are integers (0.1% covers it);
            # jemalloc's own unbiasing adds its size-class padding (up to ~0.2% seen), so 0.5%.
            slack = (0.005 if a.mode == "usable" else 0.001) * t + 64
            z = (est - t) / sigma if sigma > 0 else 0.0
            zs.append(z)
            nchecks += 1
            lam += p3
            if abs(est - t) > 3 * sigma + slack:
                nover3 += 1
            if est < lo - slack or est > hi + slack:
                problems.append(f"run {run}: estimate {est:.0f} outside [{lo:.0f}, {hi:.0f}] "
                                f"(z = {z:+.2f})")
        t = truths[0] if truths else 0
        mean = sum(ests) / len(ests) if ests else 0.0
        if t > 0:
            s = runs[0][0][name]
            objs = s["objs"]
            sigma = site_sigma(objs, R) * (t / s["req"] if s["req"] else 1)
            rel = sigma / t
            need = a.mean_sigmas * rel / math.sqrt(K)
            merr = (mean - t) / t
            checked = t >= a.min_mean_bytes
            if checked and need > a.mean_tol:
                problems.append(f"design: {a.mean_sigmas:g} sigma of the mean ({need:.2%}) exceeds {a.mean_tol:.0%}; "
                                f"raise K or the site's size")
            if checked and abs(merr) > a.mean_tol:
                problems.append(f"mean {mean:.0f} is {merr:+.2%} off the truth")
            print(f"{name:<16} {fmt_mib(t)} {sigma / 1048576:6.3f}MiB {rel:8.4f} {min(zs, default=0):+7.2f} "
                  f"{max(zs, default=0):+7.2f} {fmt_mib(mean)} {merr:+9.3%} "
                  f"{need if checked else float('nan'):10.3%}  {'ok' if not problems else 'FAIL'}")
        else:
            print(f"{name:<16} {fmt_mib(0)} {'-':>10} {'-':>8} {'-':>7} {'-':>7} {fmt_mib(mean)} "
                  f"{'-':>9} {'-':>10}  {'ok (~0 live)' if not problems else 'FAIL'}")
        for p in problems[:6]:
            print(f"    {name}: {p}")
        if len(problems) > 6:
            print(f"    {name}: ... and {len(problems) - 6} more")
        bad += bool(problems)
    limit = poisson_quantile(lam, 1e-6)
    print(f"|z| > 3 in {nover3} of {nchecks} site estimates; expected {lam:.2f} from the exact "
          f"distributions; allowed <= {limit} (Poisson tail < 1e-6)")
    if nover3 > limit:
        print("too many estimates beyond 3 sigma: the estimator is biased or too noisy")
        bad += 1
    print("PASS" if not bad else f"FAIL ({bad} problems)")
    return 1 if bad else 0


def cmd_heapv2_to_legacy(a):
    """FORMATS.md 2.3: sum each record's t* line, emit `n: b [an: ab] @ frames`."""
    out = []
    period = None
    stack = None
    tn = tb = tan = tab = 0
    maps = []
    with open(a.dump) as f:
        lines = f.read().split("\n")
    i = 0
    m = re.match(r"heap_v2/(\d+)", lines[0])
    if not m:
        raise SystemExit(f"accuracy: {a.dump}:1: not a heap_v2 dump")
    period = int(m.group(1))
    for i in range(1, len(lines)):
        line = lines[i].strip()
        if line.startswith("MAPPED_LIBRARIES:"):
            maps = lines[i:]
            break
        if line.startswith("@"):
            stack = line[1:].split()
            continue
        m = re.match(r"t\*: (\d+): (\d+) \[(\d+): (\d+)\]$", line)
        if m and stack is not None:
            n, b, an, ab = map(int, m.groups())
            out.append(f"{n}: {b} [{an}: {ab}] @ {' '.join(stack)}")
            tn, tb, tan, tab = tn + n, tb + b, tan + an, tab + ab
            stack = None
    print(f"heap profile: {tn}: {tb} [{tan}: {tab}] @ heap_v2/{period}")
    print("\n".join(out))
    print()
    print("\n".join(maps))
    return 0


def cmd_sigma(a):
    objs = []
    for term in a.objs.split("+"):
        c, _, s = term.partition("x")
        objs.append((int(c), int(s)))
    t = sum(n * s for n, s in objs)
    sg = site_sigma(objs, a.period)
    print(f"truth {t} bytes, sigma {sg:.0f} bytes, relative {sg / t:.4f}")
    return 0


def main():
    ap = argparse.ArgumentParser(prog="accuracy.py", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("exact")
    e.add_argument("--kind", choices=["jeprof", "pprof"], required=True)
    e.add_argument("--mode", choices=["req", "usable"], default="req")
    e.add_argument("--tol", type=float, default=0.005)
    e.add_argument("--col", choices=["flat", "cum"], help="override the truth file's column")
    e.add_argument("--value", choices=["live", "alloc"], default="live",
                   help="compare live bytes (default) or cumulative allocated bytes (prof_accum)")
    e.add_argument("truth")
    e.add_argument("report")
    s = sub.add_parser("sampled")
    s.add_argument("--kind", choices=["jeprof", "pprof"], required=True)
    s.add_argument("--mode", choices=["req", "usable"], default="req")
    s.add_argument("--period", type=float, required=True)
    s.add_argument("--min-mean-bytes", type=float, default=8 << 20)
    s.add_argument("--mean-tol", type=float, default=0.05)
    s.add_argument("--mean-sigmas", type=float, default=4.5,
                   help="the design check: mean-tol must be >= this many sigma of the mean")
    s.add_argument("--col", choices=["flat", "cum"], help="override the truth file's column")
    s.add_argument("files", nargs="+")
    c = sub.add_parser("heapv2-to-legacy")
    c.add_argument("dump")
    g = sub.add_parser("sigma")
    g.add_argument("--period", type=float, required=True)
    g.add_argument("objs")
    a = ap.parse_args()
    return {"exact": cmd_exact, "sampled": cmd_sampled, "heapv2-to-legacy": cmd_heapv2_to_legacy,
            "sigma": cmd_sigma}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
