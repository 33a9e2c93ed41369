//! Target and PTX ISA version requirements: every instruction (its opcode, modifiers and the
//! special registers it reads) against `src/isa/requirements.txt`, given the module's
//! `.target` and `.version`, as ptxas checks them ("Feature '.abs' requires .target sm_86 or
//! higher"). A module whose target or version is unknown is checked against what is known; the
//! header check reports the rest.

use crate::isa::decoded::Decoded;
use crate::isa::requirements::{requirements, Arch, Requirement, Unmet, Version};
use crate::syntax::ast::{Instruction, Module, Operand};
use crate::syntax::diag::Diagnostic;
use crate::syntax::span::Span;

/// The module header as the requirements see it.
pub(super) struct ModuleTarget {
    /// The architecture of the first `sm_XX`/`compute_XX` entry of `.target`.
    arch: Option<Arch>,
    version: Option<Version>,
}

impl ModuleTarget {
    pub(super) fn of(module: &Module<'_>) -> ModuleTarget {
        ModuleTarget {
            arch: module.target.iter().find_map(|t| Arch::parse(t)),
            version: (module.version.0 != 0).then_some(module.version),
        }
    }
}

/// Checks one matched instruction; pushes one diagnostic per unmet requirement.
pub(super) fn check_instruction(
    module: &ModuleTarget,
    i: &Instruction<'_>,
    decoded: &Decoded,
    diags: &mut Vec<Diagnostic>,
) {
    if module.arch.is_none() && module.version.is_none() {
        return;
    }
    removed_forms(module, i, decoded, diags);
    let table = requirements();
    for r in table.for_instruction(decoded.opcode(), &decoded.mods, i.operands.len()) {
        report(module, r, i, i.op_span, diags);
    }
    if table.has_special_registers() {
        for op in &i.operands {
            special_registers(op, &mut |name, span| {
                for r in table.for_special_register(name) {
                    report(module, r, i, span, diags);
                }
            });
        }
    }
}

/// Calls `f` for each special register an operand reads (`%clusterid.x` → `%clusterid`).
fn special_registers(op: &Operand<'_>, f: &mut dyn FnMut(&str, Span)) {
    match op {
        Operand::Name { name, span, .. } if name.starts_with('%') => f(name, *span),
        Operand::AddrList(items, _) | Operand::Vec(items, _) | Operand::List(items, _) => {
            for o in items {
                special_registers(o, f);
            }
        }
        Operand::Pair(a, b, _) => {
            special_registers(a, f);
            special_registers(b, f);
        }
        _ => {}
    }
}

fn report(
    module: &ModuleTarget,
    r: &Requirement,
    i: &Instruction<'_>,
    span: Span,
    diags: &mut Vec<Diagnostic>,
) {
    let Err(unmet) = r.check(module.arch, module.version) else {
        return;
    };
    let spelled: String = std::iter::once(i.opcode.spelling())
        .chain(i.mods.iter().map(|m| m.spelling()))
        .collect();
    let feature = r.feature();
    let message = match unmet {
        Unmet::Target => format!(
            "`{spelled}`: {feature} requires .target {} (the module targets {})",
            r.targets_text(),
            module.arch.map_or_else(String::new, |a| a.to_string()),
        ),
        Unmet::Version { need, on } => {
            let (major, minor) = module.version.unwrap_or_default();
            let on = on.map_or_else(String::new, |t| format!(" on {t}"));
            format!(
                "`{spelled}`: {feature} requires PTX ISA {}.{} or later{on} (the module declares .version {major}.{minor})",
                need.0, need.1
            )
        }
    };
    diags.push(Diagnostic::new(span, message));
}

/// Forms that later targets removed, which requirements.txt (first target and version that
/// have a feature) cannot say: `vote` and `shfl` without `.sync` are gone on sm_70 and later
/// from PTX ISA 6.4 on (ptxas: "Instruction 'vote' without '.sync' is not supported on
/// .target sm_70 and higher from PTX ISA version 6.4").
fn removed_forms(
    module: &ModuleTarget,
    i: &Instruction<'_>,
    decoded: &Decoded,
    diags: &mut Vec<Diagnostic>,
) {
    use crate::isa::{Mod, Opcode};
    let (Some(arch), Some(version)) = (module.arch, module.version) else {
        return;
    };
    if matches!(decoded.opcode(), Opcode::Vote | Opcode::Shfl)
        && !decoded.has(Mod::Sync)
        && arch.number >= 70
        && version >= (6, 4)
    {
        let op = decoded.opcode().spelling();
        diags.push(Diagnostic::new(
            i.op_span,
            format!(
                "`{op}` without `.sync` is not supported on sm_70 and later from PTX ISA 6.4 (the module targets {arch} with .version {}.{}): use `{op}.sync` with a member mask",
                version.0, version.1
            ),
        ));
    }
}
