#!/usr/bin/env python3
"""debug_cost.py: what `-g` costs in compile time on the cpu target (issue #18: at most 1.5x).

For every corpus PTX file with `.loc` line info, compiles it to an object (`--emit obj`) at
-O0 and -O2, with and without `-g`, in alternating pairs (so each ratio is taken between two
back-to-back compiles on a possibly busy machine), `--reps` pairs each, and prints per file and
level the median ratio -g/plain with its spread, then the geometric mean and the maximum.

    python3 scripts/debug_cost.py [--reps 3] [--bin target/release/ptx2llvm] [FILES...]
"""
import argparse
import math
import os
import pathlib
import statistics
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def compile_time(binary, ptx, opt, g, out):
    cmd = [binary, str(ptx), "--target", "cpu", "--emit", "obj", f"-O{opt}", "-o", out]
    if g:
        cmd.append("-g")
    env = dict(os.environ, PTX2LLVM_CACHE="0")
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        # A file the cpu target refuses by name (tcgen05, …) is left out and said so.
        raise RuntimeError(r.stderr.decode(errors="replace").splitlines()[0][:200])
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--bin", default=str(ROOT / "target/release/ptx2llvm"))
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    files = [pathlib.Path(f) for f in a.files] or sorted(
        p for p in (ROOT / "tests/corpus").rglob("*.ptx") if ".loc" in p.read_text(errors="replace")
    )
    ratios = []
    print(f"{'file':<52} {'level':>5} {'plain s':>8} {'-g s':>8} {'-g/plain (min-max)':>22}")
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "k.o")
        for f in files:
            for opt in (0, 2):
                pairs = []
                try:
                    for _ in range(a.reps):
                        p = compile_time(a.bin, f, opt, False, out)
                        g = compile_time(a.bin, f, opt, True, out)
                        pairs.append((p, g))
                except RuntimeError as e:
                    print(f"{str(f)[-52:]:<52} left out: {e}")
                    break
                rs = [g / p for p, g in pairs]
                med = statistics.median(rs)
                ratios.append(med)
                name = str(f.relative_to(ROOT)) if f.is_absolute() and ROOT in f.parents else str(f)
                print(
                    f"{name[-52:]:<52} {'-O' + str(opt):>5} "
                    f"{statistics.median(p for p, _ in pairs):8.3f} "
                    f"{statistics.median(g for _, g in pairs):8.3f} "
                    f"{med:8.2f} ({min(rs):.2f}-{max(rs):.2f})"
                )
    gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"geometric mean of the median ratios: {gm:.2f}; maximum {max(ratios):.2f} ({len(ratios)} file-levels)")


if __name__ == "__main__":
    main()
