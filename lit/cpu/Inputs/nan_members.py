"""Inputs and reference for run-simd-nan-members.ptx: c[i] = a[i] + b[i] in f32 with the GPU's
NaN (0x7fffffff for any NaN result, whatever the operands' payloads).

gen A B: writes two files of 4096 f32, mixing ordinary numbers, NaNs with payloads and signs
(quiet and signaling), infinities of both signs (inf + -inf is a NaN) and signed zeros.
check A B C [K]: compares C with the sum computed here (only the first K, default all; the
rest of C must be zero); prints "checked N sums, W wrong".
"""
import random
import struct
import sys

N = 4096


def special(rng):
    return rng.choice([
        0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800123, 0x7FA5A5A5, 0x7FFFFFFF,
        0x7F800000, 0xFF800000, 0x00000000, 0x80000000, 0x00000001, 0x3F800000,
    ])


def gen(pa, pb):
    rng = random.Random(7)
    a, b = [], []
    for i in range(N):
        for out in (a, b):
            if rng.random() < 0.3:
                out.append(special(rng))
            else:
                out.append(struct.unpack("<I", struct.pack("<f", rng.uniform(-1e3, 1e3)))[0])
    for path, xs in ((pa, a), (pb, b)):
        with open(path, "wb") as f:
            f.write(struct.pack("<%dI" % N, *xs))


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def add(x, y):
    s = f32(x) + f32(y)
    if s != s:
        return 0x7FFFFFFF
    # A sum of two floats in double rounds to float correctly (53 >= 2 * 24 + 2).
    try:
        return struct.unpack("<I", struct.pack("<f", s))[0]
    except OverflowError:
        return 0x7F800000 if s > 0 else 0xFF800000


def check(pa, pb, pc, k=N):
    read = lambda p: struct.unpack("<%dI" % N, open(p, "rb").read())
    a, b, c = read(pa), read(pb), read(pc)
    wrong = 0
    for i in range(N):
        want = add(a[i], b[i]) if i < int(k) else 0
        if c[i] != want:
            if wrong < 5:
                print("x %d: %08x + %08x = %08x, want %08x" % (i, a[i], b[i], c[i], want))
            wrong += 1
    print("checked %d sums, %d wrong" % (N, wrong))


if __name__ == "__main__":
    {"gen": gen, "check": check}[sys.argv[1]](*sys.argv[2:])
