# SPDX-License-Identifier: BSD-2-Clause
# hog.py - a python3 host for tests/e2e/host_python.sh: large bytearrays (malloc through
# PyMem_RawMalloc, kept live), a dict of many small objects, and churn. Deterministic output.
import sys

def hog(n):
    return [bytearray(1 << 20) for _ in range(n)]

def churn(rounds):
    total = 0
    for i in range(rounds):
        d = {j: str(j) * 3 for j in range(2000)}
        total += len(d)
    return total

kept = hog(48)
print("kept", sum(len(b) for b in kept))
print("churn", churn(50))
# Python frees its objects at shutdown, so the final dump is nearly empty: take a manual dump
# now through heaptap's C API when it is loaded (and nothing when it is not).
import ctypes
try:
    ctypes.CDLL(None).heaptap_dump(None)
except AttributeError:
    pass
sys.exit(4)
