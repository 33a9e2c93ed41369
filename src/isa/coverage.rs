//! The coverage table of `docs/COVERAGE.md`, generated from the instruction-set declaration:
//! one row per opcode with its number of forms, whether it is parsed, and how far each target
//! supports it. [`support`] is the one place that records target support: the lowering code
//! owns its lists and fills them in as instructions are implemented.

use std::fmt::Write as _;

use super::{forms::isa, Opcode};

/// Shown for an instruction a target does not translate (yet).
pub const UNSUPPORTED: &str = "—";

/// Opcodes the nvptx target translates, with a short status (`yes`, `partial: …`).
pub const NVPTX_SUPPORT: &[(Opcode, &str)] = &[];

/// Opcodes the cpu target translates, with a short status (`yes`, `partial: …`).
pub const CPU_SUPPORT: &[(Opcode, &str)] = &[];

/// How far `target` (`"nvptx"` or `"cpu"`) supports `op`: `—` when it does not.
pub fn support(op: Opcode, target: &str) -> &'static str {
    if target == "nvptx" {
        // How the nvptx target realizes each opcode: target-independent LLVM IR from the shared
        // lowering, `llvm.nvvm.*` intrinsics, or PTX inline assembly (instructions with no
        // meaning outside NVIDIA hardware).
        return match op.spelling() {
            "add" | "sub" | "mul" | "mad" | "div" | "sqrt" => "LLVM IR; `.rz/.rm/.rp`, f32 `.ftz`: NVVM intrinsic",
            "fma" => "LLVM IR; `.rz/.rm/.rp`, f32 `.ftz`: NVVM intrinsic; `.oob`: inline PTX",
            "ld" | "st" => "LLVM IR; `.mmio`, `.unified`: inline PTX",
            "prefetch" => "LLVM IR (no-op hint); `.tensormap`: inline PTX",
            "cvta" => "LLVM IR; `.to.param`: inline PTX",
            "fence" | "membar" => "LLVM IR (fence); proxy and other fences: inline PTX",
            "exit" => "LLVM IR (`ret`); in a device function: inline PTX",
            "rcp" => "LLVM IR; `.rz/.rm/.rp`, `.ftz`, `.approx.ftz`: NVVM intrinsic; `.approx.f32`: inline PTX",
            "rsqrt" | "sin" | "cos" | "lg2" | "ex2" => "NVVM intrinsic (`.approx`)",
            "tanh" => "inline PTX (`.approx`)",
            "cvt" => "LLVM IR; int↔float `.rz/.rm/.rp`, f64→f32, `.rz` to f16/bf16: NVVM intrinsic; `.rs` x4 packs: inline PTX",
            "abs" | "neg" | "min" | "max" | "mul24" | "mad24" | "sad" | "rem" | "addc" | "subc" | "madc" | "popc" | "clz"
            | "bfind" | "fns" | "brev" | "bfe" | "bfi" | "szext" | "bmsk" | "dp4a" | "dp2a" | "testp" | "copysign" | "and"
            | "or" | "xor" | "not" | "cnot" | "lop3" | "shf" | "shl" | "shr" | "prmt" | "setp" | "set" | "selp" | "slct"
            | "mov" | "ldu" | "prefetchu" | "bra" | "brx" | "call" | "ret"
            | "trap" | "alloca" | "stacksave" | "stackrestore" | "vadd" | "vsub" | "vabsdiff" | "vmin" | "vmax" | "vshl"
            | "vshr" | "vmad" | "vset" | "vadd2" | "vsub2" | "vavrg2" | "vabsdiff2" | "vmin2" | "vmax2" | "vset2"
            | "vadd4" | "vsub4" | "vavrg4" | "vabsdiff4" | "vmin4" | "vmax4" | "vset4" => "LLVM IR",
            "atom" | "red" => "LLVM IR (atomicrmw/cmpxchg); `.async`, `.mmio`: inline PTX",
            "bar" | "barrier" => "NVVM intrinsic; `.red`, `.cluster`: inline PTX",
            "activemask" | "shfl" | "vote" | "match" | "redux" | "elect" | "isspacep" => "NVVM intrinsic; other forms: inline PTX",
            _ => "inline PTX",
        };
    }
    let table = match target {
        "nvptx" => NVPTX_SUPPORT,
        "cpu" => CPU_SUPPORT,
        _ => &[],
    };
    table
        .iter()
        .find(|(o, _)| *o == op)
        .map_or(UNSUPPORTED, |(_, s)| s)
}

/// Module and function directives the parser reads, in the manual's order.
pub const DIRECTIVES: &[&str] = &[
    ".version",
    ".target",
    ".address_size",
    ".entry",
    ".func",
    ".alias",
    ".callprototype",
    ".calltargets",
    ".branchtargets",
    ".reg",
    ".sreg",
    ".const",
    ".global",
    ".local",
    ".param",
    ".shared",
    ".tex",
    ".align",
    ".ptr",
    ".attribute",
    ".maxnreg",
    ".maxntid",
    ".reqntid",
    ".minnctapersm",
    ".maxnctapersm",
    ".noreturn",
    ".pragma",
    ".abi_preserve",
    ".abi_preserve_control",
    ".explicitcluster",
    ".reqnctapercluster",
    ".maxclusterrank",
    ".blocksareclusters",
    ".extern",
    ".visible",
    ".weak",
    ".common",
    ".file",
    ".loc",
    ".section",
];

/// The instruction and directive sections of `docs/COVERAGE.md`.
pub fn coverage_markdown() -> String {
    let table = isa();
    let mut out = String::new();
    out.push_str("# PTX coverage\n\n");
    out.push_str(
        "<!-- Generated from src/isa/ptx.isa by `ptx2llvm::isa::coverage::coverage_markdown()`; \
         do not edit. Regenerate with `UPDATE_COVERAGE=1 cargo test --test coverage_doc`. -->\n\n",
    );
    let _ = writeln!(
        out,
        "The instruction set is PTX ISA 9.2 as declared in `src/isa/ptx.isa`: {} opcodes, {} forms. \
         *forms* counts the syntax lines declared for the opcode: the manual's, plus the few \
         modifier orders real compilers also use, after expanding opcode placeholders such as the \
         video `vop`; *parsed* means the parser reads every form and the \
         checker validates its modifiers and operands; *nvptx* and *cpu* say how far each target \
         translates it (`{UNSUPPORTED}`: not yet).\n",
        Opcode::COUNT,
        table.forms().len()
    );
    out.push_str("## Instructions\n\n");
    out.push_str("| opcode | forms | parsed | nvptx | cpu |\n");
    out.push_str("| --- | ---: | --- | --- | --- |\n");
    for &op in Opcode::ALL {
        let _ = writeln!(
            out,
            "| `{}` | {} | yes | {} | {} |",
            op.spelling(),
            table.form_count(op),
            support(op, "nvptx"),
            support(op, "cpu")
        );
    }
    out.push_str("\n## Directives\n\n");
    out.push_str("| directive | parsed |\n| --- | --- |\n");
    for d in DIRECTIVES {
        let _ = writeln!(out, "| `{d}` | yes |");
    }
    out
}
