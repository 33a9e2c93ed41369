"""Inputs and reference for run-private-red-window.ptx: a byte histogram.

gen DATA: writes 20000 bytes (every value, skewed towards a few).
check DATA OUT OFF EXTRA: the 256 32-bit bins at byte OFF of OUT must be the counts of DATA's
bytes; with EXTRA, the 4 words after the bins must hold 5000 each (i & 3 of 20000 indices),
and every other word of OUT must be 0. Prints "bins ok" or what differs.
"""
import struct
import sys

N = 20000


def gen(path):
    data = bytes(((i * 7919) % 256) if i % 3 else (i % 5) for i in range(N))
    open(path, "wb").write(data)


def check(dpath, opath, off, extra):
    data = open(dpath, "rb").read()
    out = open(opath, "rb").read()
    words = list(struct.unpack("<%dI" % (len(out) // 4), out))
    want = [0] * len(words)
    for b in data:
        want[off // 4 + b] += 1
    if extra:
        for k in range(4):
            want[off // 4 + 256 + k] = N // 4
    bad = [i for i in range(len(words)) if words[i] != want[i]]
    print("bins ok" if not bad else "word %d: %d, want %d" % (bad[0], words[bad[0]], want[bad[0]]))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == "1")
