//! Modifier rules that ptxas enforces beyond the forms of `ptx.isa`: combinations of modifiers,
//! and of modifiers with state spaces and types, that each form allows on its own. Every rule
//! quotes the ptxas 13 message it mirrors; `tests/ptxas_diff.rs` holds them to ptxas.

use crate::isa::decoded::Decoded;
use crate::isa::{Mod, Opcode};
use crate::syntax::ast::Instruction;
use crate::syntax::diag::Diagnostic;

use super::instr::instr_name;

/// Checks one decoded instruction against the rules; pushes one diagnostic per broken rule.
pub(super) fn check_rules(instr: &Instruction<'_>, d: &Decoded, diags: &mut Vec<Diagnostic>) {
    let mut err = |msg: String| diags.push(Diagnostic::new(instr.op_span, msg));
    let name = || instr_name(instr);
    let op = instr.opcode;

    // "Modifier '.evict_last' cannot be applied to '.shared' space", "State space incorrect for
    // feature 'cache prefetching'", "Illegal use of attribute '.unified'": cache policies,
    // eviction priorities, prefetch sizes and `.unified` are for global memory (named, or
    // reached through a generic address).
    if matches!(op, Opcode::Ld | Opcode::St | Opcode::Atom | Opcode::Red) && !d.has(Mod::Async) {
        if let Some(space) = d.space().filter(|s| !matches!(s, Mod::Global)) {
            if let Some(cache) = d.mods.iter().copied().find(|m| is_cache_modifier(*m)) {
                err(format!(
                    "`{}`: `{}` applies to global memory only, not to `{}`",
                    name(),
                    cache.spelling(),
                    space.spelling()
                ));
            }
        }
    }

    // "Instruction 'ld' requires '.v8.b32/.v4.b64' type with '.L2::evict_first' modifier".
    if matches!(op, Opcode::Ld | Opcode::St) {
        if let Some(ev) = d
            .mods
            .iter()
            .copied()
            .find(|m| m.spelling().starts_with(".L2::evict_"))
        {
            let bits = d.types().first().and_then(|t| t.type_bits()).unwrap_or(0)
                * u32::from(d.vec_width().unwrap_or(1));
            if bits != 256 {
                err(format!(
                    "`{}`: `{}` needs a 256-bit access (`.v8.b32`, `.v4.b64`, …)",
                    name(),
                    ev.spelling()
                ));
            }
        }
    }

    // "Illegal modifier '.ftz' for instruction 'setp'/'cvt'": flushing subnormals needs an f32
    // (or, for comparisons, a half-precision) operand.
    if d.has(Mod::Ftz) {
        let types = d.types();
        let float = match op {
            Opcode::Cvt => types.contains(&Mod::F32),
            // The compared type: `set.dtype.stype`'s second, `setp.type`'s only.
            Opcode::Set | Opcode::Setp => types
                .last()
                .is_some_and(|t| matches!(t, Mod::F32 | Mod::F16 | Mod::F16x2)),
            _ => true,
        };
        if !float {
            err(format!(
                "`{}`: `.ftz` needs an `.f32` operand (it flushes f32 subnormals)",
                name()
            ));
        }
    }

    // "Mismatch between instruction type and comparison qualifier": bit-size types compare
    // for equality only, signed integers without the unsigned orderings, and the unordered
    // comparisons are for floats.
    if matches!(op, Opcode::Set | Opcode::Setp) {
        if let (Some(cmp), Some(&t)) = (d.cmp_op(), d.types().last()) {
            let s = cmp.spelling();
            let ok = if t.is_bit_type() {
                matches!(s, ".eq" | ".ne")
            } else if t.is_signed() {
                matches!(s, ".eq" | ".ne" | ".lt" | ".le" | ".gt" | ".ge")
            } else if t.is_unsigned() {
                matches!(
                    s,
                    ".eq" | ".ne" | ".lt" | ".le" | ".gt" | ".ge" | ".lo" | ".ls" | ".hi" | ".hs"
                )
            } else {
                !matches!(s, ".lo" | ".ls" | ".hi" | ".hs")
            };
            if !ok {
                err(format!(
                    "`{}`: the comparison `{s}` does not apply to `{}` operands",
                    name(),
                    t.spelling()
                ));
            }
        }
    }

    // "Modifier '.abs' requires modifier '.xorsign'" and the other way round (the two-source
    // forms; the three-source `min.abs.f32 d, a, b, c` takes `.abs` alone).
    if matches!(op, Opcode::Min | Opcode::Max)
        && d.form().operands.len() == 3
        && d.has(Mod::Xorsign) != d.has(Mod::Abs)
    {
        err(format!(
            "`{}`: `.xorsign` and `.abs` go together (`.xorsign.abs`)",
            name()
        ));
    }
}

/// Cache-control modifiers that only global memory takes.
fn is_cache_modifier(m: Mod) -> bool {
    let s = m.spelling();
    s.starts_with(".L1::") || s.starts_with(".L2::") || m == Mod::Unified
}
