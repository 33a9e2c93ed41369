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
