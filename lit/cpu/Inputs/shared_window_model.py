# A model of `win` in run-simd-shared-window.ptx: the output words of two CTAs of `n`
# threads for parameters `j` and `m`, written to `path` (little-endian u32).
import struct
import sys

n, j, m, path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
M = 0xFFFFFFFF
out = []
for cta in range(2):
    s = [(0x7FC00001 + 977 * i) & M if i % 5 == 0 else 3 * i + 1 for i in range(256)]
    v = [s[((t ^ j) * m) & 255] for t in range(n)]
    w = [s[(255 - 3 * t) & 255] if t & 1 else 0 for t in range(n)]
    for t in range(n):
        s[(t ^ j) & 255] = (v[t] + 1) & M
    for t in range(n):
        out += [v[t], w[t], s[t & 255]]
open(path, "wb").write(struct.pack("<%dI" % len(out), *out))
