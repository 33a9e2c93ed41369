#!/usr/bin/env python3
# replay.py: replays launch records (src/api/record.rs, made with PTX2LLVM_RECORD=DIR) through a
# CUDA driver — a real GPU's libcuda.so.1, or ptx2llvm's own (target/release/cuda) to test this
# script — and compares each output buffer with the one the cpu target produced.
#
#   python3 scripts/gpu-diff/replay.py [--resume] RECORDS_DIR REPORT.tsv [GPU_OUT_DIR]
#   python3 scripts/gpu-diff/replay.py --attrs RECORDS_DIR ATTRS.tsv
#
# REPORT.tsv gets one line per record: folder, origin, kernel, verdict (same | differ | gpu-error
# | load-error | cpu-error), differing bytes per buffer and the first differing 32-bit words
# (offset:cpu/gpu). With GPU_OUT_DIR, the GPU's output buffers of records that differ are written
# there (folder/out<i>.bin) for a closer look. Records whose cpu launch failed (fault tests) are
# not replayed: a fault on a GPU poisons the context. A GPU error resets the primary context; where
# the driver refuses even that (a sticky error: every later call of the process fails), the script
# exits with status 3 and `--resume` in a new process goes on after the records REPORT.tsv holds.
# Needs cuda-bindings (`cuda.bindings.driver`, cuda-python 12.6+).
import ctypes
import os
import re
import sys
import time

import numpy as np

from cuda.bindings import driver as cu


def ok(r):
    err = r[0]
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(cu.cuGetErrorName(err)[1].decode())
    return r[1] if len(r) == 2 else r[1:]


def parse(path):
    rec = {"params": [], "buffers": []}
    for line in open(path):
        key, _, rest = line.rstrip("\n").partition(" ")
        if key == "buffer":
            rec["buffers"].append(int(rest.split()[1]))
        elif key == "param":
            off, kind, *more = rest.split(" ")
            rec["params"].append((int(off), kind, more))
        elif key in ("grid", "block"):
            rec[key] = [int(x) for x in rest.split()]
        elif key in ("shared", "paramsize"):
            rec[key] = int(rest)
        else:
            rec[key] = rest
    return rec


class Gpu:
    def __init__(self):
        ok(cu.cuInit(0))
        self.dev = ok(cu.cuDeviceGet(0))
        self.name = ok(cu.cuDeviceGetName(64, self.dev)).split(b"\0")[0].decode()
        self.open()

    def open(self):
        self.ctx = ok(cu.cuDevicePrimaryCtxRetain(self.dev))
        ok(cu.cuCtxSetCurrent(self.ctx))
        self.modules = {}
        # Modules with module-scope `.global` variables (kernels may keep state there).
        self.stateful = set()

    def reset(self):
        cu.cuDevicePrimaryCtxRelease(self.dev)
        cu.cuDevicePrimaryCtxReset(self.dev)
        self.open()

    def module(self, root, name):
        """Loads a recorded module; one the driver refuses for its `.version`, its `.target` or
        non-ASCII bytes in comments is loaded again with the version capped at what the driver
        reads, the target lowered to the device's (instructions that need more then fail the
        load) and those bytes replaced."""
        cached = self.modules.get(name)
        if cached is not None and cached[0] == "ok" and name in self.stateful:
            # Its `.global` variables must start as the module declares them, as in the
            # recording process's first launch: a fresh load for every launch.
            cu.cuModuleUnload(cached[1])
            del self.modules[name]
        if name not in self.modules:
            src = open(os.path.join(root, name), "rb").read()
            if re.search(rb"^\s*(\.visible\s+|\.extern\s+)?\.global\s", src, re.M):
                self.stateful.add(name)
            try:
                self.modules[name] = ("ok", ok(cu.cuModuleLoadData(src + b"\0")))
            except RuntimeError as e:
                try:
                    self.modules[name] = ("ok", ok(cu.cuModuleLoadData(self.lowered(src) + b"\0")))
                except RuntimeError as e2:
                    self.modules[name] = ("err", f"{e}; lowered: {e2}")
        return self.modules[name]

    def lowered(self, src):
        v = ok(cu.cuDriverGetVersion())
        major, minor = v // 1000, (v % 1000) // 10
        cap = (major - 4, minor)
        maj = ok(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.dev))
        mnr = ok(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.dev))
        sm = maj * 10 + mnr

        def version(m):
            x, y = int(m.group(1)), int(m.group(2))
            x, y = min((x, y), cap)
            return f".version {x}.{y}".encode()

        def target(m):
            n = int(m.group(1))
            return f".target sm_{sm}".encode() if n > sm else m.group(0)

        # The driver's JIT (580) refuses bytes above 0x7f even in comments, which ptxas takes.
        src = re.sub(rb"[\x80-\xff]", b"?", src)
        src = re.sub(rb"\.version\s+(\d+)\.(\d+)", lambda m: version(m), src, count=1)
        return re.sub(rb"\.target\s+sm_(\d+)[af]?", lambda m: target(m), src, count=1)


def words(b, i):
    return int.from_bytes(b[i : i + 4].ljust(4, b"\0"), "little")


def replay(gpu, root, folder, rec):
    status, mod = gpu.module(root, rec["module"])
    if status != "ok":
        return "load-error", mod, {}
    func = ok(cu.cuModuleGetFunction(mod, rec["kernel"].encode()))
    shared = rec.get("shared", 0)
    if shared > 48 * 1024:
        ok(cu.cuFuncSetAttribute(
            func, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared))
    bufs = {}
    holders = []
    try:
        for i, n in enumerate(rec["buffers"]):
            d = ok(cu.cuMemAlloc(max(n, 1)))
            bufs[i] = (d, n)
            data = open(os.path.join(folder, f"in{i}.bin"), "rb").read()
            if n:
                ok(cu.cuMemcpyHtoD(d, data, n))
        for off, kind, more in rec["params"]:
            if kind == "pointer":
                i, delta = int(more[0]), int(more[1])
                holders.append(ctypes.c_uint64(int(bufs[i][0]) + delta))
            else:
                raw = bytes.fromhex(more[0])
                holders.append((ctypes.c_uint8 * max(len(raw), 1)).from_buffer_copy(raw.ljust(1, b"\0")))
        ptrs = (ctypes.c_void_p * max(len(holders), 1))(*[ctypes.addressof(h) for h in holders])
        g, b = rec["grid"], rec["block"]
        ok(cu.cuLaunchKernel(func, g[0], g[1], g[2], b[0], b[1], b[2], shared, 0,
                             ctypes.addressof(ptrs), 0))
        ok(cu.cuCtxSynchronize())
        outs = {}
        for i, (d, n) in bufs.items():
            host = bytearray(n)
            if n:
                ok(cu.cuMemcpyDtoH(host, d, n))
            outs[i] = bytes(host)
        return "ran", "", outs
    except RuntimeError as e:
        return "gpu-error", str(e), {}
    finally:
        for d, _ in bufs.values():
            cu.cuMemFree(d)


ATTRS = ["NUM_REGS", "LOCAL_SIZE_BYTES", "SHARED_SIZE_BYTES", "CONST_SIZE_BYTES",
         "MAX_THREADS_PER_BLOCK", "PTX_VERSION"]


def attributes(root, out):
    """Writes each recorded kernel's cuFuncGetAttribute answers to `out` (TSV), so that the
    attributes ptx2llvm computes (src/attrs.rs) can be compared with a real driver's."""
    gpu = Gpu()
    seen = set()
    with open(out, "w") as f:
        f.write("module\tkernel\t" + "\t".join(ATTRS) + "\n")
        for d in sorted(os.listdir(root)):
            path = os.path.join(root, d, "launch.txt")
            if not os.path.isfile(path):
                continue
            rec = parse(path)
            key = (rec["module"], rec["kernel"])
            if key in seen:
                continue
            seen.add(key)
            status, mod = gpu.module(root, rec["module"])
            if status != "ok":
                continue
            func = ok(cu.cuModuleGetFunction(mod, rec["kernel"].encode()))
            vals = []
            for a in ATTRS:
                r = cu.cuFuncGetAttribute(getattr(cu.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + a), func)
                vals.append(str(r[1]) if r[0] == cu.CUresult.CUDA_SUCCESS else "err")
            f.write(f"{rec['module']}\t{rec['kernel']}\t" + "\t".join(vals) + "\n")
    print(f"attributes of {len(seen)} kernels written to {out}")


def main():
    if sys.argv[1] == "--attrs":
        attributes(sys.argv[2], sys.argv[3])
        return
    args = sys.argv[1:]
    resume = args[0] == "--resume"
    if resume:
        args = args[1:]
    root, report = args[0], args[1]
    gpu_out = args[2] if len(args) > 2 else None
    gpu = Gpu()
    folders = sorted(f for f in os.listdir(root) if os.path.isfile(os.path.join(root, f, "launch.txt")))
    done = set()
    if resume and os.path.exists(report):
        done = {line.split("\t", 1)[0] for line in open(report) if not line.startswith("#")}
    counts = {}
    t0 = time.time()
    with open(report, "a" if resume else "w") as rep:
        if not done:
            rep.write(f"# device\t{gpu.name}\n")
        for n, f in enumerate(folders):
            if f in done:
                continue
            folder = os.path.join(root, f)
            rec = parse(os.path.join(folder, "launch.txt"))
            if not rec.get("outcome", "").startswith("ok"):
                verdict, detail = "cpu-error", rec.get("outcome", "")
            else:
                verdict, detail, outs = replay(gpu, root, folder, rec)
                if verdict == "gpu-error":
                    try:
                        gpu.reset()
                    except RuntimeError as e:
                        rep.write(f"{f}\t{rec.get('origin', '')}\t{rec.get('kernel', '')}\t{verdict}\t{detail}\n")
                        print(f"{f}: the context cannot be reset ({e}); resume in a new process", flush=True)
                        sys.exit(3)
                if verdict == "ran":
                    diffs = []
                    for i, g in sorted(outs.items()):
                        c = open(os.path.join(folder, f"out{i}.bin"), "rb").read()
                        bad = []
                        if c != g:
                            a = np.frombuffer(c, np.uint8)
                            bb = np.frombuffer(g, np.uint8)
                            bad = np.nonzero(a != bb)[0].tolist()
                        if bad:
                            firsts = sorted({k - k % 4 for k in bad})[:6]
                            diffs.append(f"buf{i}:{len(bad)}B " + " ".join(
                                f"{k}:{words(c, k):08x}/{words(g, k):08x}" for k in firsts))
                            if gpu_out:
                                os.makedirs(os.path.join(gpu_out, f), exist_ok=True)
                                open(os.path.join(gpu_out, f, f"out{i}.bin"), "wb").write(g)
                    verdict = "differ" if diffs else "same"
                    detail = "; ".join(diffs)
            counts[verdict] = counts.get(verdict, 0) + 1
            rep.write(f"{f}\t{rec.get('origin', '')}\t{rec.get('kernel', '')}\t{verdict}\t{detail}\n")
            if n % 200 == 0:
                print(f"{n}/{len(folders)} {time.time() - t0:.0f}s {counts}", flush=True)
    print(f"done: {len(folders)} records in {time.time() - t0:.0f}s on {gpu.name}: {counts}")


if __name__ == "__main__":
    main()
