# Source-line survival and ptxas cost of nvptx -O2 output, to compare code-generation choices.
# For the corpus files with `.loc` (ALL=1: every corpus file), prints per file and in total the
# (kernel, file, line) kept out of the input's, ptxas registers (sum over kernels) and SASS
# instructions (.text bytes / 16). Each argument is a variant: `base` (llc on ptx2llvm's -O2 IR),
# `-llc-flag[,…]`, `opt:PASSES` (opt before llc), or `bin:PATH` (another ptx2llvm's --emit asm).
# Usage: source scripts/env.sh; python3 scripts/line_survival.py bin:OLD bin:target/release/ptx2llvm
import os, re, subprocess, sys, tempfile
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PTXAS = os.environ["PTXAS"]
LLC = os.environ.get("LLC", "/usr/lib/llvm-22/bin/llc")
FILES = """numba/axpy_lineinfo.sm80.ptx numba/axpy_lineinfo.sm90.ptx nvrtc/variants/shared_sync.debugG.sm80.ptx
nvrtc/variants/vecadd.debugG.sm80.ptx nvrtc/variants/vecadd.lineinfo.sm80.ptx
triton/matmul_fp16.sm100.ptx triton/matmul_fp16.sm80.ptx triton/matmul_fp16.sm90.ptx
triton/matmul_fp16_spec.sm100.ptx triton/matmul_fp16_spec.sm80.ptx triton/matmul_fp16_spec.sm90.ptx
triton/softmax.sm100.ptx triton/softmax.sm80.ptx triton/softmax.sm90.ptx triton/vector_add.sm100.ptx
triton/vector_add.sm80.ptx triton/vector_add.sm90.ptx triton/vector_add_spec.sm100.ptx
triton/vector_add_spec.sm80.ptx triton/vector_add_spec.sm90.ptx""".split()
FUNC = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$.]+)")
def lines(text):
    files, out, cur, fn, depth = {}, {}, None, None, 0
    for raw in text.split("\n"):
        s = raw.split("//")[0].strip()
        m = re.match(r'\.file\s+(\d+)\s+"([^"]*)"', s)
        if m: files[m.group(1)] = m.group(2); continue
        m = FUNC.match(s)
        if m and depth == 0: fn = m.group(2); cur = None; continue
        if s.startswith("{"): depth += 1; continue
        if s.startswith("}"): depth -= 1; continue
        if depth == 0 or not s: continue
        m = re.match(r"\.loc\s+(\d+)\s+(\d+)", s)
        if m: cur = (m.group(1), int(m.group(2))); continue
        if s.startswith(".") or s.endswith(":") or s.startswith("$"): continue
        if cur: out.setdefault(fn, set()).add(cur)
    return {f: {(files.get(a, a), l) for a, l in v} for f, v in out.items()}
def ptxas(text, arch):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.ptx"); open(p, "w").write(text)
        r = subprocess.run([PTXAS, "-v", f"-arch={arch}", "-o", d + "/k.cubin", p], capture_output=True, text=True)
        if r.returncode: return None, None
        regs = sum(int(x) for x in re.findall(r"Used (\d+) registers", r.stderr))
        ro = subprocess.run(["/usr/lib/llvm-22/bin/llvm-readelf", "-SW", d + "/k.cubin"], capture_output=True, text=True).stdout
        size = sum(int(m.group(1), 16) for m in re.finditer(r"\.text\.\S+\s+\S+\s+\S+\s+\S+\s+([0-9a-f]+)", ro))
        return regs, size // 16
def arch_of(text):
    m = re.search(r"\.target\s+(sm_\d+\w*)", text); a = m.group(1) if m else "sm_52"
    n = int(re.match(r"sm_(\d+)", a).group(1))
    return a, (a if n >= 75 else "sm_75")
variants = sys.argv[1:] or ["base"]
if os.environ.get("ALL"):
    FILES = sorted(os.path.relpath(os.path.join(d, x), ROOT + "/tests/corpus") for d, _, fs in os.walk(ROOT + "/tests/corpus") for x in fs if x.endswith(".ptx"))
tot = {}
for f in FILES:
    path = f"{ROOT}/tests/corpus/{f}"
    src = open(path).read()
    want = lines(src); n = sum(len(v) for v in want.values())
    arch, parch = arch_of(src)
    r = subprocess.run([f"{ROOT}/target/release/ptx2llvm", path, "--target", "nvptx", "--emit", "llvm", "-O2", "-o", "-"], capture_output=True, text=True)
    if r.returncode: continue
    ll = r.stdout
    row = [f]
    for v in variants:
        if v.startswith("bin:"):
            asm = subprocess.run([v[4:], path, "--target", "nvptx", "--emit", "asm", "-O2", "-o", "-"], capture_output=True, text=True, check=True).stdout
        elif v.startswith("opt:"):
            ll2 = subprocess.run(["/usr/lib/llvm-22/bin/opt", "-S", "-passes=" + v[4:]], input=ll, capture_output=True, text=True, check=True).stdout
            asm = subprocess.run([LLC, "-mtriple=nvptx64-nvidia-cuda", f"-mcpu={arch}", "-O2", "-o", "-"], input=ll2, capture_output=True, text=True, check=True).stdout
        else:
            flags = [] if v == "base" else v.split(",")
            asm = subprocess.run([LLC, "-mtriple=nvptx64-nvidia-cuda", f"-mcpu={arch}", "-O2", *flags, "-o", "-"], input=ll, capture_output=True, text=True, check=True).stdout
        got = lines(asm)
        k = sum(len(s & got.get(fn, set())) for fn, s in want.items())
        regs, sass = ptxas(asm, parch)
        t = tot.setdefault(v, [0, 0, 0, 0]); t[0] += k; t[1] += n; t[2] += regs or 0; t[3] += sass or 0
        row.append(f"{v}: {k}/{n} regs {regs} sass {sass}")
    print(" | ".join(row))
for v, (k, n, r, s) in tot.items():
    print(f"TOTAL {v}: lines {k}/{n} ({100*k/n:.1f}%) regs {r} sass {s}")
