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
//!   `cvt.s32.f32` is another instruction, not a reordering of this one (except tensormap's
//!   `.b1024`, which is no data type);
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

/// Instruction names longer than the opcode, as ptxas spells them (each found by ptxas 13
/// rejecting an order that moves the word: "Unknown modifier" or "Not a name of any known
/// instruction"): when an instruction's modifiers in its form's order start with these words,
/// the source must start with them too. Longest names first, so `mbarrier.try_wait.parity` is
/// found before `mbarrier.try_wait`.
pub const NAMES: &[&str] = &[
    "cp.reduce.async.bulk.tensor",
    "cp.async.bulk.prefetch.tensor",
    "multimem.cp.reduce.async.bulk",
    "cp.reduce.async.bulk",
    "cp.async.bulk.prefetch",
    "cp.async.bulk.tensor",
    "cp.async.bulk.commit_group",
    "cp.async.bulk.wait_group",
    "cp.async.mbarrier.arrive",
    "multimem.cp.async.bulk",
    "bar.warp.sync",
    "bar.cta.sync",
    "bar.cta.arrive",
    "bar.cta.red",
    "barrier.cta.sync",
    "barrier.cta.arrive",
    "barrier.cta.red",
    "barrier.cluster.arrive",
    "barrier.cluster.wait",
    "cp.async.bulk",
    "cp.async.commit_group",
    "cp.async.wait_group",
    "cp.async.wait_all",
    "mbarrier.arrive_drop.expect_tx",
    "mbarrier.arrive.expect_tx",
    "mbarrier.try_wait.parity",
    "mbarrier.test_wait.parity",
    "tcgen05.mma.ws",
    "tcgen05.ld.red",
    "wmma.load.a",
    "wmma.load.b",
    "wmma.load.c",
    "wmma.store.d",
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
    "madc.lo",
    "dp2a.lo",
    "dp2a.hi",
    "madc.hi",
    "div.full",
    "cvta.to",
    "cvt.pack",
    "fence.proxy",
    "membar.proxy",
    "shf.l",
    "shf.r",
    "brx.idx",
    "pmevent.mask",
    "setmaxnreg.inc",
    "setmaxnreg.dec",
    "bar.red",
    "bar.arrive",
    "barrier.red",
    "barrier.arrive",
    "clusterlaunchcontrol.query_cancel",
    "clusterlaunchcontrol.try_cancel.async",
    "clusterlaunchcontrol.try_cancel",
    "cp.async",
    "createpolicy.fractional",
    "createpolicy.range",
    "createpolicy.cvt",
    "mbarrier.arrive_drop",
    "mbarrier.arrive",
    "mbarrier.expect_tx",
    "mbarrier.complete_tx",
    "mbarrier.init",
    "mbarrier.inval",
    "mbarrier.pending_count",
    "mbarrier.try_wait",
    "mbarrier.test_wait",
    "multimem.ld_reduce",
    "multimem.st",
    "multimem.red",
    "st.bulk",
    "st.async",
    "red.async",
    "suld.b",
    "sust.b",
    "sust.p",
    "sured.b",
    "sured.p",
    "tcgen05.mma",
    "tcgen05.ld",
    "tcgen05.st",
    "tcgen05.cp",
    "tcgen05.shift",
    "tcgen05.alloc",
    "tcgen05.dealloc",
    "tcgen05.relinquish_alloc_permit",
    "tcgen05.commit",
    "tcgen05.fence::before_thread_sync",
    "tcgen05.fence::after_thread_sync",
    "tcgen05.wait::ld",
    "tcgen05.wait::st",
    "tensormap.replace",
    "tensormap.cp_fenceproxy",
    "tex.base",
    "tex.level",
    "tex.grad",
    "txq.level",
    "wgmma.mma_async",
    "wgmma.fence",
    "wgmma.commit_group",
    "wgmma.wait_group",
    "wmma.mma",
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
    let source = &instr.mods[..];
    let post = instr.post_mods().count();
    // `.sync`, `.sat`, `.uni` and `.approx` written twice are the modifier once: ptxas sets a flag
    // twice. Every other repeat is an error there ("Duplicate .ftz modifier", "Multiple
    // .aligned modifiers specified", "Multiple rounding modifiers specified", `mul.lo.lo`).
    let mut deduped: SmallVec<[Mod; 8]> = SmallVec::new();
    for (k, &m) in source.iter().enumerate() {
        let repeat = k < source.len() - post && source[..k].contains(&m);
        if repeat && REPEATABLE.contains(&m) {
            continue;
        }
        deduped.push(m);
    }
    let mods = &deduped[..];
    let order = form.reorder(mods)?;
    let opcode = form.opcode.spelling();
    if order[..] == *source {
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
    // (`.b1024`, the tensormap object's type, is not a data type: ptxas takes it before or after
    // the new value's `.b32`/`.b64`, as in `tensormap.replace.tile.rank.global.b32.b1024`.)
    let data_type = |m: Mod| m.is_instr_type() && m != Mod::B1024;
    if !same_subsequence(data_type) || !same_subsequence(Mod::is_space) {
        return None;
    }
    // A longer instruction name must be written first, as one word.
    if let Some(name) = names_of(opcode).find(|n| order.starts_with(n)) {
        if !mods.starts_with(&name) {
            return None;
        }
    }
    Some(order.into_iter().collect())
}

/// The modifiers ptxas 13 takes twice (measured; `.ftz`, `.nc`, `.volatile`, `.aligned` and
/// the valued kinds it rejects).
const REPEATABLE: &[Mod] = &[Mod::Sync, Mod::Sat, Mod::Uni, Mod::Approx];
