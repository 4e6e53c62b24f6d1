#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# scripts/spdx.py - the license line of every source file: `--check` lists the tracked source
# files (C, C++, headers, shell, Python, Rust, Perl, Makefile, version scripts) without an
# SPDX-License-Identifier line among their first three lines and exits 1 when there are any;
# `--add` puts `SPDX-License-Identifier: BSD-2-Clause` in the file's comment syntax on its first
# line (after a #! line). Test data (corpora, golden outputs) is not source and is left alone.
import os, subprocess, sys

TAG = "SPDX-License-Identifier: BSD-2-Clause"
EXT = {".c": "c", ".h": "c", ".cc": "c", ".rs": "slash", ".map": "c", ".in": "hash",
       ".sh": "hash", ".py": "hash", ".pl": "hash", ".inc": "hash"}

def kind(path):
    base = os.path.basename(path)
    if base == "Makefile":
        return "hash"
    if "/corpus/" in path or "/golden" in path or path.startswith("tests/data/"):
        return None
    return EXT.get(os.path.splitext(path)[1])

def main():
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True).stdout.strip()
    os.chdir(root or ".")
    files = subprocess.run(["git", "ls-files"], capture_output=True, text=True).stdout.split("\n")
    missing = []
    for f in files:
        k = f and kind(f)
        if not k or not os.path.isfile(f):
            continue
        with open(f, encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096)
        if TAG.split(":")[0] in "\n".join(head.split("\n")[:3]):
            continue
        missing.append(f)
        if "--add" in sys.argv:
            with open(f, encoding="utf-8", errors="surrogateescape") as fh:
                text = fh.read()
            line = {"c": "/* %s */\n", "slash": "// %s\n", "hash": "# %s\n"}[k] % TAG
            if text.startswith("#!"):
                nl = text.index("\n") + 1
                text = text[:nl] + line + text[nl:]
            else:
                text = line + text
            with open(f, "w", encoding="utf-8", errors="surrogateescape") as fh:
                fh.write(text)
    if "--check" in sys.argv and missing:
        print("files without an SPDX-License-Identifier line (scripts/spdx.py --add):")
        for f in missing:
            print("  " + f)
        sys.exit(1)

main()
