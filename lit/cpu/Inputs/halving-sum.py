"""Input and expected output of run-simd-tree-retype.ptx: 1280 integer-valued floats (their
sums are exact in any order, so the order of the CTAs' float atomics does not matter), n = 1200;
the sum of the first n as the kernel's one float."""
import struct
import sys

N = 1200
vals = [float((i * 53) % 97 - 48) for i in range(1280)]
open(sys.argv[1], "wb").write(struct.pack("<%df" % len(vals), *vals))
open(sys.argv[2], "wb").write(struct.pack("<f", sum(vals[:N])))
