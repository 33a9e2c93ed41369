#!/usr/bin/env python3
"""Regenerates the checked-in PTX of the CMake example's kernels with NVRTC (no GPU needed).

    source scripts/env.sh && pip install nvidia-cuda-nvrtc          # once, into the repo's .venv
    python3 examples/cmake-project/kernels/regen.py [FILE.cu ...]   # default: every *.cu here

Each KERNEL.cu becomes KERNEL.ptx beside it, compiled for compute_80 with `-std=c++17` (NVRTC
optimizes at its default level, as CUDA applications get). The build never runs this: the .ptx
files are checked in so that building the example needs no NVRTC.
"""
import ctypes
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OPTS = [b"--gpu-architecture=compute_80", b"-std=c++17"]


def find_nvrtc():
    if os.environ.get("NVRTC_LIB"):
        return os.environ["NVRTC_LIB"]
    roots = [os.path.join(HERE, "..", "..", "..", ".venv")] + [sys.prefix]
    for r in roots:
        for rel in ("lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so.13",
                    "lib/python3*/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"):
            hits = sorted(glob.glob(os.path.join(r, rel)))
            if hits:
                return hits[0]
    return "libnvrtc.so"


def compile_one(lib, path):
    src = open(path, "rb").read()
    prog = ctypes.c_void_p()
    name = os.path.basename(path).encode()
    check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), src, name, 0, None, None), path)
    opts = (ctypes.c_char_p * len(OPTS))(*OPTS)
    rc = lib.nvrtcCompileProgram(prog, len(OPTS), opts)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if log.value.strip():
        sys.stderr.write(log.value.decode(errors="replace"))
    check(lib, rc, path)
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    check(lib, lib.nvrtcGetPTX(prog, ptx), path)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    out = os.path.splitext(path)[0] + ".ptx"
    with open(out, "wb") as f:
        f.write(ptx.value)
    print(f"{os.path.relpath(path)} -> {os.path.relpath(out)}")


def check(lib, rc, what):
    if rc != 0:
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        sys.exit(f"{what}: NVRTC error {rc}: {lib.nvrtcGetErrorString(rc).decode()}")


def main():
    lib = ctypes.CDLL(find_nvrtc())
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    print(f"NVRTC {major.value}.{minor.value}")
    files = sys.argv[1:] or sorted(glob.glob(os.path.join(HERE, "*.cu")))
    for f in files:
        compile_one(lib, f)


if __name__ == "__main__":
    main()
