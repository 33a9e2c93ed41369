"""Inputs and an exact reference for run-directed-rounding.ptx.

`gen OUT`: 64 lanes of f32 operands a, b, c, then f64 operands a, b, c (seeded random values
of every size, subnormals, zeros of both signs, infinities, NaN, and per lane kinds that make
exact cancellation, tiny or overflowing results likely).
`check IN OUT`: every non-ftz result of the kernel against the exact value rounded in its
direction (Python's Fractions), NaN results as the GPU's: f32 0x7fffffff, f64 any NaN.
"""
import math
import random
import struct
import sys
from fractions import Fraction

LANES = 64
F32 = (24, -126, 127, "<f", "<I", 4)
F64 = (53, -1022, 1023, "<d", "<Q", 8)
# The kernel's results per lane, in order: (type, op, rounding, ftz)
OPS = [(F32, op, r, False) for op in ("add", "sub", "mul", "fma") for r in ("rm", "rp", "rz")]
OPS += [(F32, "add", "rm", True), (F32, "mul", "rp", True), (F32, "fma", "rm", True), (F32, "fma", "rz", True)]
OPS += [(F64, "add", "rm", False), (F64, "sub", "rp", False), (F64, "mul", "rm", False),
        (F64, "mul", "rz", False), (F64, "fma", "rm", False), (F64, "fma", "rp", False)]


def rnd(t, x):
    return struct.unpack(t[3], struct.pack(t[3], x))[0]


def value(t, rng, lane, k):
    kind = lane % 8
    special = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0]
    if kind == 0 and k < 2:
        return special[(lane // 8 + k) % len(special)]
    if kind == 1:  # subnormal or tiny
        e = t[1] - rng.randint(-4, t[0] - 2)
    elif kind == 2:  # huge
        e = t[2] - rng.randint(0, 3)
    else:
        e = rng.randint(-20, 20)
    m = 1 + rng.random()
    return rnd(t, rng.choice([-1, 1]) * m * 2.0 ** e)


def gen(path):
    rng = random.Random(17)
    out = b""
    for t in (F32, F64):
        vals = [[value(t, rng, lane, k) for lane in range(LANES)] for k in range(3)]
        for lane in range(LANES):
            a, b, c = vals[0][lane], vals[1][lane], vals[2][lane]
            if lane % 8 == 3:  # exact cancellation: c = -a*b when exact, b = -a
                vals[1][lane] = -a
                vals[2][lane] = rnd(t, -a * b)
            if lane % 8 == 4:  # near-cancellation by one ulp
                vals[1][lane] = rnd(t, -a * (1 + 2.0 ** -(t[0] - 1)))
        for k in range(3):
            out += struct.pack("<%d%s" % (LANES, t[3][1]), *vals[k])
    open(path, "wb").write(out)


def round_exact(t, q, mode):
    mant, emin, emax = t[0], t[1], t[2]
    neg = q < 0
    a = -q if neg else q
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    e = max(e, emin)
    ulp = Fraction(2) ** (e - mant + 1)
    n = a / ulp
    fl = n.numerator // n.denominator
    up = fl + (0 if n == fl else 1)
    # magnitude rounding: toward zero unless the direction is away from zero for this sign
    away = (mode == "rp" and not neg) or (mode == "rm" and neg)
    m = up if away else fl
    r = m * ulp
    big = (2 - Fraction(2) ** (1 - mant)) * Fraction(2) ** emax
    if r > big:
        r = math.inf if away else big
    r = float(r) if r != math.inf else math.inf
    return -r if neg else r


def reference(t, op, mode, a, b, c):
    if op == "sub":
        op, b = "add", -b
    if op == "add":
        terms = (a, b)
    elif op == "mul":
        terms = None
    else:
        terms = ("prod", c)
    if not all(math.isfinite(x) for x in (a, b) + ((c,) if op == "fma" else ())):
        # no rounding: infinities and NaNs
        if op == "add":
            return a + b
        if op == "mul":
            return a * b
        p = a * b
        return p + c
    if op == "mul":
        q = Fraction(a) * Fraction(b)
        if q == 0:
            return math.copysign(0.0, a) * math.copysign(1.0, b)
        return round_exact(t, q, mode)
    if op == "add":
        x, y = Fraction(a), Fraction(b)
        sx, sy = math.copysign(1, a), math.copysign(1, b)
    else:
        x, y = Fraction(a) * Fraction(b), Fraction(c)
        sx, sy = math.copysign(1, a) * math.copysign(1, b), math.copysign(1, c)
    q = x + y
    if q == 0:
        if x == 0 and y == 0 and sx == sy:
            return math.copysign(0.0, sx)
        return -0.0 if mode == "rm" else 0.0
    return round_exact(t, q, mode)


def check(inp, outp):
    data = open(inp, "rb").read()
    f32 = [struct.unpack_from("<%df" % LANES, data, 4 * LANES * k) for k in range(3)]
    f64 = [struct.unpack_from("<%dd" % LANES, data, 12 * LANES + 8 * LANES * k) for k in range(3)]
    res = open(outp, "rb").read()
    per = sum(t[5] for t, _, _, _ in OPS)
    bad = 0
    for lane in range(LANES):
        at = lane * per
        for t, op, mode, ftz in OPS:
            raw = struct.unpack_from(t[4], res, at)[0]
            got = struct.unpack_from(t[3], res, at)[0]
            at += t[5]
            if ftz:
                continue
            src = f32 if t is F32 else f64
            a, b, c = (src[k][lane] for k in range(3))
            want = reference(t, op, mode, a, b, c)
            if math.isnan(want):
                ok = math.isnan(got) and (t is F64 or raw == 0x7FFFFFFF)
            else:
                ok = got == want and math.copysign(1, got) == math.copysign(1, want)
            if not ok:
                bad += 1
                print("lane %d %s.%s f%d (%r, %r, %r): got %r want %r" % (lane, op, mode, 8 * t[5], a, b, c, got, want))
    print("checked %d lanes, %d wrong" % (LANES, bad))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3])
