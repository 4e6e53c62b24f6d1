#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""layering.py - checks that calls between heaptap's C files flow one way.

From the built objects (nm: the symbols each object defines and the ones it uses), it draws an
edge A -> B when A.o uses a symbol B.o defines, within each half: the collector's objects
(build/pic/{base,profile,lib}) and the CLI's (build/cli/{base,profile,cli}). Any cycle (two
files that call each other directly or through a chain) fails, naming the files and one symbol
per edge. With --table it prints each file and the files it calls (docs/INTERNALS.md shows it).
"""
import os
import subprocess
import sys


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRVWGS" + "i":
            defined.add(parts[2])
    return defined, used


def graph(objs):
    defs, uses = {}, {}
    for o in objs:
        d, u = symbols(o)
        uses[o] = u
        for s in d:
            defs.setdefault(s, o)
    edges = {o: {} for o in objs}
    for o in objs:
        for s in uses[o]:
            t = defs.get(s)
            if t and t != o:
                edges[o].setdefault(t, s)
    return edges


def sccs(edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return out


def name(obj, root):
    return os.path.relpath(obj, root)[:-2] + ".c"


def main():
    build = os.environ.get("HEAPTAP_BUILD", "build")
    table = "--table" in sys.argv
    fail = 0
    for half, dirs in (("pic", ("base", "profile", "lib")), ("cli", ("base", "profile", "cli"))):
        root = os.path.join(build, half)
        objs = []
        for d in dirs:
            for dp, _, fs in os.walk(os.path.join(root, d)):
                objs += [os.path.join(dp, f) for f in fs if f.endswith(".o")]
        if not objs:
            print(f"no objects under {root} (run make)")
            return 1
        edges = graph(sorted(objs))
        for comp in sccs(edges):
            if len(comp) < 2:
                continue
            fail = 1
            print(f"CYCLE in {half}: " + ", ".join(sorted(name(c, root) for c in comp)))
            members = set(comp)
            for a in sorted(comp):
                for b, s in sorted(edges[a].items()):
                    if b in members:
                        print(f"    {name(a, root)} -> {name(b, root)} ({s})")
        if table and half == "pic":
            for a in sorted(edges):
                if "/lib/" in a:
                    callees = sorted(name(b, root) for b in edges[a])
                    print(f"{name(a, root)}: {' '.join(callees)}")
        print(f"{half}: {len(objs)} objects, {sum(len(e) for e in edges.values())} file-to-file edges")
    return fail


if __name__ == "__main__":
    sys.exit(main())
