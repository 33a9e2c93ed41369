#!/usr/bin/env python3
# types.py: writes cuda/src/types/gen.rs, the enums of NVIDIA's public cuda.h that libcuda
# needs, with the header's exact values (and, for CUresult, its name and first sentence).
# Run at development time when the header changes; the output is committed, so builds need no
# header:  python3 cuda/gen/types.py .venv/lib/python3.*/site-packages/nvidia/cu13/include/cuda.h
import re
import sys

# Rust enum name -> C typedef name.
ENUMS = {
    "CUresult": "cudaError_enum",
    "DeviceAttr": "CUdevice_attribute_enum",
    "PointerAttr": "CUpointer_attribute_enum",
    "FuncAttr": "CUfunction_attribute_enum",
    "JitOption": "CUjit_option_enum",
    "JitInputType": "CUjitInputType_enum",
    "Limit": "CUlimit_enum",
    "MemoryType": "CUmemorytype_enum",
    "LaunchAttrId": "CUlaunchAttributeID_enum",
    "ProcAddressQuery": "CUdriverProcAddressQueryResult_enum",
}

src = open(sys.argv[1]).read()


def body(cname):
    m = re.search(r"typedef enum " + cname + r"\s*\{(.*?)\}\s*\w+;", src, re.S)
    if not m:
        sys.exit(f"types.py: enum {cname} not in the header")
    return m.group(1)


ENTRY = re.compile(
    r"(?:/\*\*(?!<)(?P<pre>(?:(?!\*/).)*)\*/\s*)?,?\s*(?P<name>[A-Z][A-Z0-9_]+)\s*=\s*(?P<val>[^,/}\n]+)",
    re.S,
)


def entries(cname):
    out, known = [], {}
    for m in ENTRY.finditer(body(cname)):
        name, val = m.group("name"), m.group("val").strip()
        expr = re.sub(r"\b([A-Z][A-Z0-9_]+)\b", lambda n: str(known[n.group(1)]), val)
        expr = re.sub(r"(0x[0-9a-fA-F]+|\d+)[uUlL]+", r"\1", expr)
        v = eval(expr)
        known[name] = v
        pre = " ".join((m.group("pre") or "").replace("*", " ").split())
        out.append((name, v, pre))
    return out


def camel(name, prefix):
    rest = name[len(prefix):] if name.startswith(prefix) else name
    return "".join(w.capitalize() for w in rest.lower().split("_") if w) or "Zero"


def prefix_of(names):
    p = names[0]
    for n in names[1:]:
        while not n.startswith(p):
            p = p[:-1]
    return p[: p.rfind("_") + 1]


def sentence(text):
    text = re.sub(r"::(\w+)", r"\1", text).replace("\\deprecated ", "Deprecated: ").replace("\\", "")
    m = re.match(r"(.*?\.)(\s|$)", text)
    return (m.group(1) if m else text).replace('"', "'")


lines = [
    "//! Enums of NVIDIA's public `cuda.h` (CUDA 13.x) with the header's exact values, written by",
    "//! `cuda/gen/types.py` (do not edit by hand). Names that alias an earlier value keep the",
    "//! first spelling; `from_raw` maps a C value to the enum (unknown values: `None`).",
    "",
    "#![allow(clippy::enum_variant_names, clippy::upper_case_acronyms)]",
    "",
]
for rust, cname in ENUMS.items():
    es = entries(cname)
    pre = "CUDA_" if rust == "CUresult" else prefix_of([n for n, _, _ in es if not n.endswith("_MAX")])
    seen, variants = set(), []
    for n, v, d in es:
        if v in seen or n.endswith("_MAX") or n.endswith("_FORCE_INT"):
            continue
        seen.add(v)
        variants.append((n, camel(n, pre), v, d))
    lines.append(f"/// `{cname.removesuffix('_enum')}`.")
    lines.append("#[repr(i32)]")
    lines.append("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]")
    lines.append(f"pub enum {rust} {{")
    for n, r, v, _ in variants:
        lines.append(f"    /// `{n}`")
        lines.append(f"    {r} = {v},")
    lines.append("}")
    lines.append("")
    lines.append(f"impl {rust} {{")
    lines.append("    pub fn from_raw(v: i32) -> Option<Self> {")
    lines.append("        Some(match v {")
    for n, r, v, _ in variants:
        lines.append(f"            {v} => Self::{r},")
    lines.append("            _ => return None,")
    lines.append("        })")
    lines.append("    }")
    if rust == "CUresult":
        lines.append("")
        lines.append("    /// The C name (`CUDA_ERROR_INVALID_VALUE`), NUL-terminated.")
        lines.append("    pub fn name(self) -> &'static str {")
        lines.append("        match self {")
        for n, r, v, _ in variants:
            lines.append(f'            Self::{r} => "{n}\\0",')
        lines.append("        }")
        lines.append("    }")
        lines.append("")
        lines.append("    /// The header's description (first sentence), NUL-terminated.")
        lines.append("    pub fn description(self) -> &'static str {")
        lines.append("        match self {")
        for n, r, v, d in variants:
            lines.append(f'            Self::{r} => "{sentence(d)}\\0",')
        lines.append("        }")
        lines.append("    }")
    lines.append("}")
    lines.append("")
open(sys.argv[2] if len(sys.argv) > 2 else "cuda/src/types/gen.rs", "w").write("\n".join(lines))
