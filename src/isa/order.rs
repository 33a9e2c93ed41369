//! Modifier order: which orders of an instruction's modifiers are the same instruction.
//!
//! The manual writes each form with its modifiers in one order (`add{.rnd}{.ftz}{.sat}.f32`),
//! but ptxas reads most modifiers as a set: `add.f32.rn`, `ld.f32.global`,
//! `atom.global.gpu.acq_rel.add.f32` and `shfl.bfly.sync.b32` are all valid. Three things are
//! not free, and this module is where they are written down (each was found with ptxas 13 and
//! is held to it by `tests/ptxas_diff.rs`):
//!
//! - **instruction names**: ptxas knows some instructions by a longer name than their first
//!   word — `mul.lo`, `mad.wide`, `div.full`, `cvta.to`, `cp.async`, `mbarrier.try_wait.parity`,
//!   … (see [`NAMES`]). Those modifiers must follow the opcode directly, in that order:
//!   `mul.u32.lo` is an error (ptxas then reads `.lo` as a comparison);
//! - **types keep their relative order**: `cvt.f32.s32` converts an `.s32` into an `.f32`, so
//!   `cvt.s32.f32` is another instruction, not a reordering of this one;
//! - **state spaces keep their relative order** (destination before source in `cp.async`,
//!   `cp.async.bulk`, …).
//!
//! [`canonical`] gives the modifiers of an instruction in the order of a form's slots when the
//! source order is one of the orders ptxas takes; the decoder then matches that order, so every
//! later stage (checker, lowering, `fmt`) sees one order.

use smallvec::SmallVec;

use super::forms::Form;
use super::Mod;
use crate::syntax::ast::Instruction;

/// Instruction names longer than the opcode, as ptxas spells them: when an instruction's form
/// holds these modifiers (after the opcode, in this order), the source must write them first.
/// Longest names first, so `mbarrier.try_wait.parity` is found before `mbarrier.try_wait`.
pub const NAMES: &[&str] = &[
    "mul.lo",
    "mul.hi",
    "mul.wide",
    "mad.lo",
    "mad.hi",
    "mad.wide",
    "mul24.lo",
    "mul24.hi",
    "mad24.lo",
    "mad24.hi",
    "div.full",
    "cvta.to",
    "fence.proxy",
    "cp.async",
    "mbarrier.try_wait.parity",
    "mbarrier.test_wait.parity",
    "mbarrier.try_wait",
    "mbarrier.test_wait",
];

/// The modifier sequences of [`NAMES`] that start with `opcode`, parsed once per call (the list
/// is short and this runs only for instructions written out of the manual's order).
fn names_of(opcode: &str) -> impl Iterator<Item = SmallVec<[Mod; 3]>> + '_ {
    NAMES.iter().filter_map(move |name| {
        let rest = name.strip_prefix(opcode)?;
        if !rest.starts_with('.') {
            return None;
        }
        rest[1..]
            .split('.')
            .map(|w| Mod::from_spelling(&format!(".{w}")))
            .collect::<Option<SmallVec<[Mod; 3]>>>()
    })
}

/// The instruction's modifiers in the order of `form`'s slots, when they fit the form in some
/// order that ptxas also takes; `None` when they do not, or when the source order already is
/// the form's order (the caller matched that one already).
pub fn canonical(form: &Form, instr: &Instruction<'_>) -> Option<SmallVec<[Mod; 4]>> {
    let mods = &instr.mods[..];
    let post = instr.post_mods().count();
    let order = form.reorder(mods)?;
    if order[..] == *mods {
        return None;
    }
    // Modifiers written after operands stay where they were.
    if order[order.len() - post..] != mods[mods.len() - post..] {
        return None;
    }
    // Types and state spaces keep their relative order.
    let same_subsequence = |keep: fn(Mod) -> bool| {
        mods.iter()
            .copied()
            .filter(|&m| keep(m))
            .eq(order.iter().copied().filter(|&m| keep(m)))
    };
    if !same_subsequence(Mod::is_type) || !same_subsequence(Mod::is_space) {
        return None;
    }
    // A longer instruction name must be written first, as one word.
    let opcode = form.opcode.spelling();
    if let Some(name) = names_of(opcode).find(|n| order.starts_with(n)) {
        if !mods.starts_with(&name) {
            return None;
        }
    }
    Some(order.into_iter().collect())
}
