#!/usr/bin/env python3
# mma_probe.py: every floating-point mma.sync form of sm_80 (f16, bf16, tf32 with f32 or f16
# accumulators, f64) with NaN, infinity and zero operands, one warp per launch, run through
# ptx2llvm so that PTX2LLVM_RECORD keeps the launches for replay.py on a GPU (docs/GPU_DIFF.md,
# session 21: the H200's canonical NaNs):
#   PTX2LLVM_RECORD=/tmp/rec python3 scripts/gpu-diff/mma_probe.py /tmp/probe [PTX2LLVM]
import os, random, struct, subprocess, sys
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
FORMS = [
    # name, shape, types, (na, nb, nc, nd), elem kind of a/b, c/d kind
    ("f32_f16_k16", "m16n8k16", "f32.f16.f16.f32", (4, 2, 4, 4), "f16", "f32"),
    ("f32_bf16_k16", "m16n8k16", "f32.bf16.bf16.f32", (4, 2, 4, 4), "bf16", "f32"),
    ("f16_f16_k16", "m16n8k16", "f16.f16.f16.f16", (4, 2, 2, 2), "f16", "f16"),
    ("f32_f16_k8", "m16n8k8", "f32.f16.f16.f32", (2, 1, 4, 4), "f16", "f32"),
    ("f32_tf32_k8", "m16n8k8", "f32.tf32.tf32.f32", (4, 2, 4, 4), "tf32", "f32"),
    ("f32_bf16_k8", "m16n8k8", "f32.bf16.bf16.f32", (2, 1, 4, 4), "bf16", "f32"),
    ("f64_k4", "m8n8k4", "f64.f64.f64.f64", (1, 1, 2, 2), "f64", "f64"),
    ("f32_e4m3_k32", "m16n8k32", "f32.e4m3.e4m3.f32", (4, 2, 4, 4), "e4m3", "f32"),
    ("f32_e5m2_k32", "m16n8k32", "f32.e5m2.e5m2.f32", (4, 2, 4, 4), "e5m2", "f32"),
]
MODES = ["nan", "inf", "cnan", "rand", "big", "tiny", "zero"]
NAN16 = {"f16": [0x7e01, 0xfd00, 0x7c01, 0xffff], "bf16": [0x7fc1, 0xff81, 0x7f81, 0xffff]}
def half(kind, mode):
    if kind == "f16":
        v = struct.unpack("<H", struct.pack("<e", random.uniform(-2, 2)))[0]
        inf, zero = 0x7c00, 0
    else:
        v = struct.unpack("<I", struct.pack("<f", random.uniform(-2, 2)))[0] >> 16
        inf, zero = 0x7f80, 0
    r = random.random()
    if mode == "nan" and r < 0.05: return random.choice(NAN16[kind])
    if mode == "inf" and r < 0.1: return random.choice([inf, inf | 0x8000, zero])
    return v
def fp8(mode):
    if mode == "zero": return random.choice([0, 0x80])
    return random.randrange(256) & 0x77 if random.random() < 0.9 else random.choice([0, 0x80])
def special16(kind, mode):
    """Operands for the edge modes: big (products near 2^30, C near the f32 maximum), tiny
    (subnormal operands and C), zero (signed zeros)."""
    one = 0x3c00 if kind == "f16" else 0x3f80
    if mode == "zero": return random.choice([0, 0x8000, 0, one])
    if mode == "big": return random.choice([0x7bff, 0xfbff, 0x7800, one]) if kind == "f16" else random.choice([0x7f7f, 0xff7f, 0x7f00, one])
    return random.choice([0x0001, 0x8001, 0x03ff, 0x0400, one]) if kind == "f16" else random.choice([0x0001, 0x8001, 0x007f, 0x0080, one])
def word32(kind, mode):
    v = struct.unpack("<I", struct.pack("<f", random.uniform(-2, 2)))[0]
    if kind == "tf32": v &= ~0x1fff
    r = random.random()
    if mode == "nan" and r < 0.05: v = random.choice([0x7fc02000, 0xffc04000, 0x7f802000, 0xffffe000])
    if mode == "inf" and r < 0.1: v = random.choice([0x7f800000, 0xff800000, 0])
    if mode == "cnan" and r < 0.1: v = random.choice([0x7fc00001, 0xffc00000, 0x7f800001])
    return v
def f64w(mode):
    v = struct.unpack("<Q", struct.pack("<d", random.uniform(-2, 2)))[0]
    r = random.random()
    if mode == "nan" and r < 0.1: v = random.choice([0x7ff8000000000123, 0xfff8000000000000, 0x7ff0000000000001])
    if mode == "inf" and r < 0.15: v = random.choice([0x7ff0000000000000, 0xfff0000000000000, 0])
    return v
for name, shape, types, (na, nb, nc, nd), ek, ck in FORMS:
    f64 = ek == "f64"
    rt = ".f64" if f64 else ".b32"
    regs = lambda p, n: "{" + ", ".join(f"%{p}{i}" for i in range(n)) + "}"
    ldt = "f64" if f64 else "b32"
    wsz = 8 if f64 else 4
    lines = [".version 8.4" if ek in ("e4m3", "e5m2") else ".version 7.8", ".target " + ("sm_89" if ek in ("e4m3", "e5m2") else "sm_80"), ".address_size 64",
             ".visible .entry k(.param .u64 pin, .param .u64 pout)", "{",
             "  .reg .u64 %pi, %po, %off; .reg .u32 %t;",
             f"  .reg {rt} %a<{na}>, %b<{nb}>, %c<{nc}>, %d<{nd}>;",
             "  ld.param.u64 %pi, [pin]; ld.param.u64 %po, [pout];",
             "  mov.u32 %t, %tid.x; mul.wide.u32 %off, %t, 128;",
             "  add.u64 %pi, %pi, %off; add.u64 %po, %po, %off;"]
    o = 0
    for p, n in (("a", na), ("b", nb), ("c", nc)):
        for i in range(n):
            lines.append(f"  ld.global.{ldt} %{p}{i}, [%pi+{o}];"); o += wsz
    lines.append(f"  mma.sync.aligned.{shape}.row.col.{types} {regs('d', nd)}, {regs('a', na)}, {regs('b', nb)}, {regs('c', nc)};")
    for i in range(nd):
        lines.append(f"  st.global.{ldt} [%po+{i * wsz}], %d{i};")
    lines += ["  ret;", "}"]
    ptx = os.path.join(out, name + ".ptx")
    open(ptx, "w").write("\n".join(lines) + "\n")
    for mode in MODES:
        if f64 and mode not in ("nan", "inf", "cnan"):
            continue
        for seed in range(3):
            random.seed(f"{name}-{mode}-{seed}")
            buf = bytearray(32 * 128)
            for lane in range(32):
                o = lane * 128
                for p, n in (("a", na), ("b", nb), ("c", nc)):
                    for i in range(n):
                        if ek in ("e4m3", "e5m2") and p != "c":
                            struct.pack_into("<I", buf, o, fp8(mode) | fp8(mode) << 8 | fp8(mode) << 16 | fp8(mode) << 24); o += 4
                        elif mode in ("big", "tiny", "zero"):
                            if p == "c" and ck == "f32":
                                w = {"big": random.choice([0x7f7fffff, 0xff7fffff, 0x7f000000, 0]),
                                     "tiny": random.choice([0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0]),
                                     "zero": random.choice([0, 0x80000000])}[mode]
                                struct.pack_into("<I", buf, o, w); o += 4
                            elif ek == "tf32" and p != "c":
                                w = {"big": random.choice([0x7f000000, 0xff000000, 0x3f800000]),
                                     "tiny": random.choice([0x00002000, 0x80002000, 0x00800000, 0x3f800000]),
                                     "zero": random.choice([0, 0x80000000, 0x3f800000])}[mode]
                                struct.pack_into("<I", buf, o, w); o += 4
                            else:
                                k16 = ek if p != "c" else "f16"
                                k16 = "f16" if k16 == "tf32" else k16
                                struct.pack_into("<I", buf, o, special16(k16, mode) | special16(k16, mode) << 16); o += 4
                        elif mode == "rand":
                            if p == "c" and ck == "f32" or ek == "tf32":
                                struct.pack_into("<I", buf, o, word32("tf32" if (ek == "tf32" and p != "c") else "f32", "x")); o += 4
                            else:
                                k16 = ek if p != "c" else "f16"
                                struct.pack_into("<I", buf, o, half(k16, "x") | half(k16, "x") << 16); o += 4
                        elif f64:
                            m = mode if (p != "c" or mode == "cnan") else "x"
                            struct.pack_into("<Q", buf, o, f64w("nan" if m == "cnan" else m)); o += 8
                        elif p == "c" and ck == "f32":
                            struct.pack_into("<I", buf, o, word32("f32", mode if mode == "cnan" else "x")); o += 4
                        elif ek == "tf32":
                            struct.pack_into("<I", buf, o, word32("tf32", mode if mode != "cnan" else "x")); o += 4
                        else:
                            m = mode if (p != "c") else ("nan" if mode == "cnan" else "x")
                            lo, hi = half(ek if p != "c" else "f16", m), half(ek if p != "c" else "f16", m)
                            struct.pack_into("<I", buf, o, lo | hi << 16); o += 4
            inp = os.path.join(out, f"{name}_{mode}{seed}.bin")
            open(inp, "wb").write(buf)
            r = subprocess.run([(sys.argv[2] if len(sys.argv) > 2 else "target/release/ptx2llvm"), "run", ptx, "--kernel", "k",
                                "--block", "32", "--arg", "@" + inp, "--arg", "zeros:4096"],
                               capture_output=True, text=True)
            if r.returncode:
                print(name, mode, r.stderr[:300]); sys.exit(1)
print("ok")
