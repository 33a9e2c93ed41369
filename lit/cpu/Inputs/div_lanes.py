"""Inputs and expected outputs of run-simd-div-double.ptx: 32-bit dividends and divisors per
lane (edge values: 0, 1, -1, the signed minimum, all ones, values near 2^32 and their
neighbours, and pseudo-random ones), and the results PTX defines for div/rem.u32/.s32 by a lane
divisor and by a uniform one: a zero divisor gives an all-ones quotient and the dividend as the
remainder; the signed minimum over -1 wraps to itself with remainder 0. Lanes with tid % 5 == 4
skip the divisions and store 0xdeadbeef."""
import random
import struct
import sys

N = 512
out, which = sys.argv[1], sys.argv[2]
uniform = int(sys.argv[3], 0) & 0xFFFFFFFF
edge = [0, 1, 2, 3, 7, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF, 0xFFFFFFFE,
        0xFFFFFFFD, 0x10000, 0xFFFF, 0x7FFFFFFE, 46341, 65537, 0xC0000000, 0x55555555]
rng = random.Random(17)
a, b = [], []
for i in range(N):
    if i < len(edge) * len(edge):
        a.append(edge[i // len(edge)])
        b.append(edge[i % len(edge)])
    else:
        a.append(rng.getrandbits(32) >> rng.randrange(32))
        b.append(rng.getrandbits(32) >> rng.randrange(32))


def s32(x):
    return x - (1 << 32) if x & 0x80000000 else x


def udiv(x, y):
    return (0xFFFFFFFF, x) if y == 0 else (x // y, x % y)


def sdiv(x, y):
    sx, sy = s32(x), s32(y)
    if sy == 0:
        return 0xFFFFFFFF, x
    if sy == -1:
        return (-sx) & 0xFFFFFFFF, 0
    q = abs(sx) // abs(sy)
    q = q if (sx < 0) == (sy < 0) else -q
    return q & 0xFFFFFFFF, (sx - q * sy) & 0xFFFFFFFF


if which == "in":
    open(out, "wb").write(struct.pack("<%dI" % N, *a) + struct.pack("<%dI" % N, *b))
else:
    words = []
    for i in range(N):
        if i % 5 == 4:
            words += [0xDEADBEEF] * 6
            continue
        q, r = udiv(a[i], b[i])
        qs, rs = sdiv(a[i], b[i])
        qu, _ = udiv(a[i], uniform)
        _, ru = sdiv(a[i], uniform)
        words += [q, r, qs, rs, qu, ru]
    open(out, "wb").write(struct.pack("<%dI" % len(words), *words))
