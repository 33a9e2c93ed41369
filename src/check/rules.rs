//! Modifier rules that ptxas enforces beyond the forms of `ptx.isa`: combinations of modifiers,
//! and of modifiers with state spaces and types, that each form allows on its own. Every rule
//! quotes the ptxas 13 message it mirrors; `tests/ptxas_diff.rs` holds them to ptxas.

use crate::isa::decoded::Decoded;
use crate::isa::{Mod, Opcode};
use crate::syntax::ast::{Instruction, Operand};
use crate::syntax::consteval;
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

    // "Vector type too large, exceeds 128 bit limit" (256 on sm_100, which requirements.txt
    // checks): no access is wider than 256 bits.
    if matches!(op, Opcode::Ld | Opcode::St | Opcode::Ldu) {
        let bits = d.types().first().and_then(|t| t.type_bits()).unwrap_or(0)
            * u32::from(d.vec_width().unwrap_or(1));
        if bits > 256 {
            err(format!(
                "`{}`: a {bits}-bit access is wider than the 256 bits a vector may have",
                name()
            ));
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

    // "Barrier number '16' out of range, expected to be in range [0..15]".
    if matches!(op, Opcode::Bar | Opcode::Barrier) {
        let form = d.form();
        if let Ok(layout) = form.operand_layout(&instr.operands) {
            for (o, &at) in instr.operands.iter().zip(&layout) {
                if form.operands[at].name != "a" {
                    continue;
                }
                if let Operand::Imm(e) = o {
                    if let Some(v) = consteval::eval(e).filter(|v| v.bits > 15) {
                        err(format!(
                            "`{}`: barrier number {} is out of range (0 to 15)",
                            name(),
                            v.bits as i64
                        ));
                    }
                }
            }
        }
    }

    if op == Opcode::Cvt && d.form().operands.len() == 2 {
        cvt_rounding(d, &mut err, &name());
    }

    // "Modifier '.cta' requires order with 'mbarrier.arrive' instruction", "Modifier
    // '.relaxed' requires scope with 'multimem.red' instruction": the memory ordering and the
    // scope of `mbarrier` and `multimem` go together (`.weak` stands alone).
    if matches!(op, Opcode::Mbarrier | Opcode::Multimem) {
        let sem = d.sem().filter(|m| !matches!(m, Mod::Weak | Mod::Volatile));
        match (sem, d.scope()) {
            (Some(m), None) => err(format!(
                "`{}`: the ordering `{}` needs a scope (`.cta`, `.cluster`, …)",
                name(),
                m.spelling()
            )),
            (None, Some(m)) => err(format!(
                "`{}`: the scope `{}` needs a memory ordering (`.release`, `.acquire`, …)",
                name(),
                m.spelling()
            )),
            _ => {}
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

/// `cvt`'s rounding rules ("Rounding modifier required", "Illegal rounding modifier", "Illegal
/// modifier '.sat'"): a float result that can be inexact needs a float rounding (`.rn`…), an
/// integer from a float an integer rounding (`.rzi`…), a float of the same type may round to
/// an integer, and exact conversions take none.
fn cvt_rounding(d: &Decoded, err: &mut dyn FnMut(String), name: &str) {
    let types = d.types();
    let (Some(&dt), Some(&st)) = (types.first(), types.get(1)) else {
        return;
    };
    let is_float = |t: Mod| matches!(t, Mod::F16 | Mod::Bf16 | Mod::F32 | Mod::F64);
    let is_int = |t: Mod| t.is_int_type();
    if !(is_float(dt) || is_int(dt)) || !(is_float(st) || is_int(st)) {
        return;
    }
    let bits = |t: Mod| t.type_bits().unwrap_or(0);
    let rounding = d.rounding();
    let int_rnd = rounding.is_some_and(Mod::is_int_rounding);
    let float_rnd = rounding.is_some() && !int_rnd;
    // What the pair needs: Some(true) a float rounding, Some(false) an integer rounding.
    let (required, allowed_int, allowed_float) = match (is_float(dt), is_float(st)) {
        (true, false) => (Some(true), false, true),
        (false, true) => (Some(false), true, false),
        (true, true) if dt == st => (None, true, false),
        (true, true) if bits(dt) > bits(st) => (None, false, false),
        (true, true) => (Some(true), false, true),
        (false, false) => (None, false, false),
    };
    let pair = format!("{}{}", dt.spelling(), st.spelling());
    if (int_rnd && !allowed_int) || (float_rnd && !allowed_float) {
        err(format!(
            "`{name}`: `{}` is not a rounding of `cvt{pair}`",
            rounding.map_or("", Mod::spelling)
        ));
    } else if rounding.is_none() {
        match required {
            Some(true) => err(format!(
                "`{name}`: `cvt{pair}` needs a rounding modifier (`.rn`, `.rz`, `.rm`, `.rp`)"
            )),
            Some(false) => err(format!(
                "`{name}`: `cvt{pair}` needs an integer rounding modifier (`.rni`, `.rzi`, `.rmi`, `.rpi`)"
            )),
            None => {}
        }
    }
    if is_int(dt) && dt == st && d.has(Mod::Sat) {
        err(format!("`{name}`: `.sat` cannot change `cvt{pair}`"));
    }
}

/// Cache-control modifiers that only global memory takes.
fn is_cache_modifier(m: Mod) -> bool {
    let s = m.spelling();
    s.starts_with(".L1::") || s.starts_with(".L2::") || m == Mod::Unified
}
