#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""seed_cfi.py - makes seed inputs for fuzz/fuzz_lib_cfi.c from real ELF files: the file bytes
up to the end of .eh_frame as the object's image (for the small PIE programs gcc makes, file
offsets equal addresses in the read-only and code segments), the offset of .eh_frame_hdr, and
the offset of a pc inside a function (its start, middle, and last byte).

Usage: fuzz/seed_cfi.py OUTDIR ELF...
"""
import os
import struct
import subprocess
import sys


def sections(path):
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    secs = {}
    for line in out.splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 6 and f[0].startswith("[") and f[1].startswith("."):
            secs[f[1]] = (int(f[3], 16), int(f[4], 16), int(f[5], 16))  # addr, off, size
    return secs


def functions(path):
    out = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tT" and int(f[1], 16) > 1:
            yield f[3], int(f[0], 16), int(f[1], 16)


def main():
    outdir, paths = sys.argv[1], sys.argv[2:]
    os.makedirs(outdir, exist_ok=True)
    for path in paths:
        secs = sections(path)
        if ".eh_frame_hdr" not in secs or ".eh_frame" not in secs:
            continue
        hdr_addr, hdr_off, _ = secs[".eh_frame_hdr"]
        fr_addr, fr_off, fr_size = secs[".eh_frame"]
        if hdr_addr != hdr_off or fr_addr != fr_off:
            continue  # addresses are not file offsets: the image would be wrong
        image = open(path, "rb").read()[: fr_off + fr_size]
        base = os.path.basename(path)
        for name, addr, size in list(functions(path))[:4]:
            for tag, pc in (("start", addr), ("mid", addr + size // 2), ("last", addr + size - 1)):
                if pc >= len(image):
                    continue
                data = struct.pack("<II", hdr_off, pc) + image
                with open(os.path.join(outdir, f"{base}.{name}.{tag}"), "wb") as f:
                    f.write(data)


if __name__ == "__main__":
    main()
