"""Inputs and the bound check for run-ex2-approx.ptx.

`gen OUT`: 4096 f32 inputs: random over [-160, 130] and [-1, 1], the integers -160..130,
arguments of subnormal results and of overflow, subnormals (2^x is 1 for them, flushed or
not), ±0, ±inf, NaN.
`check IN OUT`: ex2.approx.f32 within the manual's relative 2^-22.5 (plus 2^-149 for subnormal
results), integers exact, overflow +inf, NaN the GPU's 0x7fffffff; ex2.approx.ftz.f32 the same
with subnormal results 0 or the bound.
"""
import math
import random
import struct
import sys

N = 4096


def gen(path):
    rng = random.Random(5)
    xs = [float(i) for i in range(-160, 131)]
    xs += [0.0, -0.0, math.inf, -math.inf, math.nan, 127.999, 128.0, 128.5, -149.0, -149.5, -150.0]
    xs += [1e-40, -1e-40, 2.0 ** -149, -(2.0 ** -149), 1.1e-38, -1.1e-38]  # subnormal inputs
    xs += [rng.uniform(-150, -125) for _ in range(512)]
    xs += [rng.uniform(-1, 1) for _ in range(1024)]
    while len(xs) < N:
        xs.append(rng.uniform(-160, 130))
    open(path, "wb").write(struct.pack("<%df" % N, *xs))


def check(inp, outp):
    xs = struct.unpack("<%df" % N, open(inp, "rb").read())
    raw = struct.unpack("<%dI" % (2 * N), open(outp, "rb").read())
    bad = 0
    for i, x in enumerate(xs):
        for ftz in (False, True):
            bits = raw[2 * i + ftz]
            got = struct.unpack("<f", struct.pack("<I", bits))[0]
            if math.isnan(x):
                ok = bits == 0x7FFFFFFF
            elif x >= 128:
                ok = got == math.inf
            elif x == -math.inf:
                ok = got == 0.0
            else:
                want = 2.0 ** x
                if x == int(x) and x >= -126:
                    ok = got == want
                elif ftz and want < 2.0 ** -126:
                    ok = got == 0.0 or abs(got - want) <= 2.0 ** -22.5 * want
                else:
                    ok = abs(got - want) <= 2.0 ** -22.5 * want + 2.0 ** -149
            if not ok:
                bad += 1
                print("x %r ftz %d: got %r (0x%08x)" % (x, ftz, got, bits))
    print("checked %d inputs, %d wrong" % (N, bad))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3])
