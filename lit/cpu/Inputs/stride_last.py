"""The outputs of run-stride-last-iteration.ptx's kernels: stride_last.py KERNEL GRID BLOCK BOUND."""
import struct
import sys

kernel, grid, block, bound = sys.argv[1], *map(int, sys.argv[2:])
data = [(k * 2654435761) & 0xFFFF for k in range(1200)]
out = []
for c in range(grid):
    for t in range(block):
        if kernel == "lt":  # i = gid; i < n; i += grid * block
            i, step, more = c * block + t, grid * block, lambda i: i < bound
        else:  # j = tid; j <= m; j += 64
            i, step, more = t, 64, lambda i: i <= bound
        s, p = 0, False
        if more(i):
            while True:
                s = (s + data[i]) & 0xFFFFFFFF
                i += step
                p = more(i)
                if not p:
                    break
        out += [i, s, 7 if p else 9]
sys.stdout.buffer.write(struct.pack("<%dI" % len(out), *out))
