"""Input and expected outputs of run-simd-tree-forward.ptx: 768 integer-valued floats (exact
sums in any order), a NaN with a payload in CTA 1, n = 758; the tree's per-CTA sum and warp 0's
32 words after it, as a GPU gives them (any NaN result is 0x7fffffff)."""
import math
import struct
import sys

N = 758
vals = [float((i * 37) % 101 - 50) for i in range(768)]
raw = [struct.pack("<f", v) for v in vals]
raw[256 + 77] = struct.pack("<I", 0x7FC01234)
open(sys.argv[1], "wb").write(b"".join(raw))


def word(x):
    return struct.pack("<I", 0x7FFFFFFF) if math.isnan(x) else struct.pack("<f", x)


sums, warp0 = [], []
for c in range(3):
    s = [struct.unpack("<f", raw[c * 256 + t])[0] if c * 256 + t < N else 0.0 for t in range(256)]
    k = 128
    while k > 0:
        for t in range(k):
            s[t] = s[t] + s[t + k]
        k //= 2
    sums.append(word(s[0]))
    warp0.extend(word(s[t]) for t in range(32))
open(sys.argv[2], "wb").write(b"".join(sums))
open(sys.argv[3], "wb").write(b"".join(warp0))
