"""Expected outputs of run-simd-step-div.ptx: for 1024 flat indices i, the pair (x / w, x % w)
with C's truncating 32-bit division, signed for x = 3 i + off (file PREFIX.s) and unsigned
for x = i + off (PREFIX.u), each wrapping as 32-bit arithmetic does.

usage: step_div.py PREFIX W_SIGNED OFF_SIGNED W_UNSIGNED OFF_UNSIGNED
"""
import struct
import sys


def s32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def main():
    prefix = sys.argv[1]
    ws, offs, wu, offu = (int(a) for a in sys.argv[2:6])
    out = []
    for i in range(1024):
        x = s32(3 * i + offs)
        q = abs(x) // ws * (1 if x >= 0 else -1)
        out += [q, x - q * ws]
    with open(prefix + ".s", "wb") as f:
        f.write(struct.pack("<2048i", *out))
    out = []
    for i in range(1024):
        x = (i + offu) & 0xFFFFFFFF
        out += [x // wu, x % wu]
    with open(prefix + ".u", "wb") as f:
        f.write(struct.pack("<2048I", *out))


main()
