//! Uniformity of a cleaned kernel function under the warp model: which values differ between
//! the lanes of a warp (varying: vectors in the warp function) and which are the same in every
//! active lane (uniform: scalars). Seeds are the per-lane context fields (`%tid`, `%laneid`),
//! atomics, per-lane calls and lane-dependent warp-operation results; data flows through
//! operands, and control through divergent branches: a phi where lanes from both sides of a
//! varying branch meet is varying, and so is a value leaving a loop that lanes leave in
//! different iterations (its exit phi, the IR being in LCSSA form). A loop's header phis stay
//! uniform when their inputs are: the active lanes run each iteration together.

use std::collections::{HashMap, HashSet};

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode as O;

use super::cfg::Cfg;
use super::ir::{self, CtxField, WarpCall};
use super::stride::Strides;

pub struct Facts {
    pub varying: HashSet<LLVMValueRef>,
    /// Blocks with a varying conditional branch.
    pub divergent: Vec<usize>,
    /// Loops that lanes may leave in different iterations.
    pub divergent_loops: Vec<bool>,
    /// Blocks that some of the warp's live lanes may skip while others run them.
    pub partial: Vec<bool>,
    /// Blocks whose mask may hold some but not all of the warp's launched lanes: those
    /// between a divergent branch and its post-dominator and those of divergent loops, less
    /// the blocks that only branches every lane of an aligned warp takes alike lead into
    /// (`aligned_compare`: the halving tree's `tid < s` steps with `s` >= 32 in a block of
    /// known size). Such branches stay divergent (their skip guards let the CTA function
    /// pass over idle warps), but a block under them runs with all the lanes or none.
    pub split: Vec<bool>,
    /// Built for aligned warps (`new`'s `rows`): lane `k`'s `%tid.x` is the first lane's
    /// plus `k`.
    pub aligned: bool,
    /// Which varying values step by a constant from lane to lane (`stride.rs`).
    pub strides: Strides,
    /// Built for row segments (`segmented`): the block is known and narrower than a warp.
    pub segment: Option<Segment>,
}

/// A known block of `(S, Y, Z)` threads with `S` (8 or 16) dividing 32: each warp is `32 / S`
/// rows of `S` lanes, lane `l` at `%tid.x = l % S`, one `%tid.y`/`%tid.z` per row. Uniformity
/// is the general one (rows differ), strides are taken row by row (`stride.rs`), and the warp
/// function builds `%tid` with shifts and constant divisions instead of lane-wise division.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// `S`: lanes per row.
    pub width: u32,
    /// The block the code is built for.
    pub block: [u32; 3],
}

impl Segment {
    /// The row segments of a launch of `block`, if its rows split warps: `%ntid.x` 8 or 16
    /// and more than one row.
    pub fn of(block: [u32; 3]) -> Option<Segment> {
        let [x, y, z] = block;
        (matches!(x, 8 | 16) && y.saturating_mul(z) > 1).then_some(Segment { width: x, block })
    }

    /// Rows per warp.
    pub fn rows(self) -> u32 {
        32 / self.width
    }
}

/// What a call is to the vectorizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallKind {
    /// `ptx2llvm_rt_self()`: the warp's context.
    SelfCtx,
    Warp(WarpCall),
    /// A CTA barrier (`barrier.rs`): a suspension point; `bar.red`'s result is CTA-wide.
    Barrier(super::barrier::BarrierCall),
    /// `interior.rs`'s way into its copy: whether a condition holds in all 32 lanes, all
    /// running (a scalar).
    Every,
    /// `coarsen.rs`'s way into its group bodies: whether the warp runs with all its lanes
    /// (a scalar).
    Coarse,
    /// An LLVM intrinsic with a lane-wise vector form.
    Lanewise,
    /// Anything else: called once per active lane, in lane order, with that lane's ids in
    /// the context.
    PerLane,
}

pub unsafe fn call_kind(i: LLVMValueRef) -> CallKind {
    let n = ir::callee(i);
    if n == "ptx2llvm_rt_self" {
        CallKind::SelfCtx
    } else if let Some(w) = WarpCall::of(&n) {
        CallKind::Warp(w)
    } else if let Some(k) = super::barrier::BarrierCall::of(&n) {
        CallKind::Barrier(k)
    } else if n == super::interior::EVERY {
        CallKind::Every
    } else if n == super::coarsen::COARSE {
        CallKind::Coarse
    } else if ir::lanewise_intrinsic(&n) {
        CallKind::Lanewise
    } else {
        CallKind::PerLane
    }
}

impl Facts {
    /// # Safety
    /// `f` must be the defined function `cfg` describes; `td` its module's data layout.
    ///
    /// `rows`: the warp's lanes are 32 consecutive `%tid.x` values starting at a multiple of
    /// 32 with one `%tid.y` and `%tid.z` (one-dimensional blocks, or `%ntid.x` a multiple of
    /// 32): then `%tid.y`/`%tid.z` are uniform, and so are `%tid.x >> 5` and its like
    /// (`aligned` values: a multiple of 32 plus the lane).
    pub unsafe fn new(
        f: LLVMValueRef,
        cfg: &Cfg,
        td: llvm_sys::target::LLVMTargetDataRef,
        rows: bool,
    ) -> Facts {
        Facts::build(f, cfg, td, rows, None, None)
    }

    /// The aligned-warp facts of code that runs only in CTAs of `block` (aligned: one
    /// dimension, or `%ntid.x` a multiple of 32): strides know the block's sizes
    /// (`Strides::new`).
    ///
    /// # Safety
    /// As `new`.
    pub unsafe fn for_block(
        f: LLVMValueRef,
        cfg: &Cfg,
        td: llvm_sys::target::LLVMTargetDataRef,
        block: [u32; 3],
    ) -> Facts {
        Facts::build(f, cfg, td, true, None, Some(block))
    }

    /// `new`, with the strides taken within the rows of `seg` when there is one, and for
    /// `block` alone when it is given.
    unsafe fn build(
        f: LLVMValueRef,
        cfg: &Cfg,
        td: llvm_sys::target::LLVMTargetDataRef,
        rows: bool,
        segment: Option<Segment>,
        block: Option<[u32; 3]>,
    ) -> Facts {
        let mut aligned: HashSet<LLVMValueRef> = HashSet::new();
        // Bits of lane-dependent values made from aligned ones by shifts and masks that may
        // differ between the lanes (`lane_bits`).
        let mut lanes: HashMap<LLVMValueRef, u64> = HashMap::new();
        let _ = f;
        let n = cfg.blocks.len();
        let mut varying: HashSet<LLVMValueRef> = HashSet::new();
        let mut joins = vec![false; n];
        let mut divergent = Vec::new();
        let mut divergent_loops = vec![false; cfg.loops.len()];
        let insts: Vec<Vec<LLVMValueRef>> =
            cfg.blocks.iter().map(|&b| ir::instructions(b)).collect();
        loop {
            let mut changed = false;
            for (b, list) in insts.iter().enumerate() {
                for &i in list {
                    if varying.contains(&i) {
                        continue;
                    }
                    let any = |ops: &[LLVMValueRef]| ops.iter().any(|o| varying.contains(o));
                    if rows && aligned_op(i, &aligned) {
                        aligned.insert(i);
                    }
                    let op = ir::opcode(i);
                    if rows && uniform_of_aligned(i, op, &aligned) {
                        continue;
                    }
                    if rows {
                        match lane_bits(i, op, &aligned, &lanes) {
                            Some(0) => continue,
                            Some(m) => {
                                lanes.insert(i, m);
                            }
                            None => {}
                        }
                    }
                    let v = match op {
                        O::LLVMLoad => {
                            let p = c::LLVMGetOperand(i, 0);
                            let field = ir::ctx_offset(td, p).map(CtxField::at);
                            if rows
                                && matches!(
                                    field,
                                    Some(CtxField::Tid(0) | CtxField::LaneId | CtxField::FlatTid)
                                )
                            {
                                aligned.insert(i);
                            }
                            let lane_field = match field {
                                Some(CtxField::Tid(1 | 2)) => !rows,
                                Some(f) => f.varying(),
                                None => false,
                            };
                            // Allocas left are the predicate outputs and fragment arrays of
                            // warp operations.
                            lane_field || varying.contains(&p) || super::matrix::is_frag_ptr(p)
                        }
                        O::LLVMAtomicRMW | O::LLVMAtomicCmpXchg => true,
                        O::LLVMCall => match call_kind(i) {
                            CallKind::SelfCtx
                            | CallKind::Barrier(_)
                            | CallKind::Every
                            | CallKind::Coarse => false,
                            CallKind::Warp(w) => !w.uniform_result(),
                            CallKind::Lanewise => any(&ir::args(i)),
                            CallKind::PerLane => true,
                        },
                        O::LLVMPHI => {
                            let header = cfg.loops.iter().any(|l| l.header == b);
                            let ops = ir::operands(i);
                            let mut v = any(&ops) || (!header && joins[b]);
                            // Exit phis of loops lanes leave at different iterations.
                            for k in 0..c::LLVMCountIncoming(i) {
                                let p = cfg.index[&c::LLVMGetIncomingBlock(i, k)];
                                let mut l = cfg.loop_of[p];
                                while let Some(x) = l {
                                    if !cfg.loops[x].blocks[b] && divergent_loops[x] {
                                        v = true;
                                    }
                                    l = cfg.loops[x].parent;
                                }
                            }
                            v
                        }
                        O::LLVMAlloca => false,
                        _ => any(&ir::operands(i)),
                    };
                    if v {
                        varying.insert(i);
                        changed = true;
                    }
                }
            }
            for b in 0..n {
                if divergent.contains(&b) {
                    continue;
                }
                let t = c::LLVMGetBasicBlockTerminator(cfg.blocks[b]);
                if c::LLVMIsConditional(t) == 0 || !varying.contains(&c::LLVMGetCondition(t)) {
                    continue;
                }
                divergent.push(b);
                changed = true;
                let ipd = cfg.ipdom[b];
                for x in cfg.region_after(b, ipd) {
                    joins[x] = true;
                }
                if ipd != cfg.exit() {
                    joins[ipd] = true;
                }
                let mut l = cfg.loop_of[b];
                while let Some(x) = l {
                    if ipd == cfg.exit() || !cfg.loops[x].blocks[ipd] {
                        divergent_loops[x] = true;
                    }
                    l = cfg.loops[x].parent;
                }
            }
            if !changed {
                break;
            }
        }
        let partial = partial_blocks(cfg, &insts, &divergent, &divergent_loops);
        let lane_split: Vec<usize> = divergent
            .iter()
            .copied()
            .filter(|&b| {
                let cond = c::LLVMGetCondition(c::LLVMGetBasicBlockTerminator(cfg.blocks[b]));
                !(rows && !c::LLVMIsAICmpInst(cond).is_null() && aligned_compare(cond, &aligned))
            })
            .collect();
        // Unlike `partial`, the lanes that left by an early exit count: they are not in the
        // mask either.
        let mut split = vec![false; n];
        for &b in &lane_split {
            for x in cfg.region_after(b, cfg.ipdom[b]) {
                split[x] = true;
            }
        }
        for (l, d) in divergent_loops.iter().enumerate() {
            if *d {
                for (b, x) in split.iter_mut().enumerate() {
                    *x |= cfg.loops[l].blocks[b];
                }
            }
        }
        let strides = Strides::new(cfg, &varying, rows, segment, block, td);
        Facts {
            varying,
            divergent,
            divergent_loops,
            partial,
            split,
            aligned: rows,
            strides,
            segment,
        }
    }

    /// The facts of `f` for row segments `seg`: the general uniformity, strides within rows.
    ///
    /// # Safety
    /// As `new`.
    pub unsafe fn segmented(
        f: LLVMValueRef,
        cfg: &Cfg,
        td: llvm_sys::target::LLVMTargetDataRef,
        seg: Segment,
    ) -> Facts {
        Facts::build(f, cfg, td, false, Some(seg), None)
    }

    pub fn is_varying(&self, v: LLVMValueRef) -> bool {
        self.varying.contains(&v)
    }
}

/// Blocks that may run with some of the warp's live lanes elsewhere: those between a divergent
/// branch and its post-dominator, and the blocks of divergent loops. A branch one of whose
/// sides only leads to the kernel's end through blocks without member-mask warp operations
/// (an early return) leaves the other side full: that side runs first (`Cfg::order`) and its
/// lanes have exited by then.
unsafe fn partial_blocks(
    cfg: &Cfg,
    insts: &[Vec<LLVMValueRef>],
    divergent: &[usize],
    divergent_loops: &[bool],
) -> Vec<bool> {
    let n = cfg.blocks.len();
    let sync_op = |b: usize| {
        insts[b].iter().any(|&i| {
            !c::LLVMIsACallInst(i).is_null()
                && match call_kind(i) {
                    CallKind::Warp(w) => w.has_member_mask(),
                    // A barrier needs every live lane of the warp there, as a full mask does.
                    CallKind::Barrier(_) => true,
                    _ => false,
                }
        })
    };
    let ret_block = (0..n).find(|&b| cfg.succ[b].is_empty());
    let mut partial = vec![false; n];
    for &b in divergent {
        let ipd = cfg.ipdom[b];
        let region = cfg.region_after(b, ipd);
        let to_end = ipd == cfg.exit() || Some(ipd) == ret_block;
        let sides: Vec<HashSet<usize>> = cfg.succ[b]
            .iter()
            .map(|&s| {
                let mut set: HashSet<usize> = cfg
                    .region_after(s, ipd)
                    .into_iter()
                    .filter(|x| Some(*x) != ret_block)
                    .collect();
                if s != ipd && Some(s) != ret_block {
                    set.insert(s);
                }
                set
            })
            .collect();
        let early_exit = to_end
            && sides.len() == 2
            && sides[0].is_disjoint(&sides[1])
            && sides.iter().any(|s| s.iter().all(|&x| !sync_op(x)));
        for x in region {
            if !early_exit || sync_op(x) && sides.iter().all(|s| s.iter().any(|&y| sync_op(y))) {
                partial[x] = true;
            }
        }
    }
    for (l, d) in divergent_loops.iter().enumerate() {
        if *d {
            for (b, p) in partial.iter_mut().enumerate() {
                if cfg.loops[l].blocks[b] {
                    *p = true;
                }
            }
        }
    }
    partial
}

/// Whether instruction `i` is an aligned value (a multiple of 32 plus the lane) given the
/// aligned values so far: casts of one, and one plus a constant multiple of 32.
unsafe fn aligned_op(i: LLVMValueRef, aligned: &HashSet<LLVMValueRef>) -> bool {
    let op = ir::opcode(i);
    let ops = ir::operands(i);
    match op {
        O::LLVMZExt | O::LLVMSExt => aligned.contains(&ops[0]),
        O::LLVMTrunc => aligned.contains(&ops[0]) && c::LLVMGetIntTypeWidth(c::LLVMTypeOf(i)) >= 6,
        O::LLVMAdd | O::LLVMOr | O::LLVMSub => {
            let k = |v: LLVMValueRef| ir::const_u64(v).is_some_and(|k| k % 32 == 0);
            (aligned.contains(&ops[0]) && k(ops[1]))
                || (op == O::LLVMAdd && aligned.contains(&ops[1]) && k(ops[0]))
        }
        _ => false,
    }
}

/// Whether instruction `i` is uniform because it drops the lane of an aligned value:
/// `>> k` (k >= 5), `/ 32m`, `& ~31`-like masks.
unsafe fn uniform_of_aligned(i: LLVMValueRef, op: O, aligned: &HashSet<LLVMValueRef>) -> bool {
    if !matches!(op, O::LLVMLShr | O::LLVMAShr | O::LLVMUDiv | O::LLVMAnd) {
        return false;
    }
    let ops = ir::operands(i);
    let (a, k) = if aligned.contains(&ops[0]) {
        (ops[0], ops[1])
    } else if op == O::LLVMAnd && aligned.contains(&ops[1]) {
        (ops[1], ops[0])
    } else {
        return false;
    };
    let _ = a;
    let Some(k) = ir::const_u64(k) else {
        return false;
    };
    match op {
        O::LLVMLShr | O::LLVMAShr => k >= 5,
        O::LLVMUDiv => k > 0 && k % 32 == 0,
        _ => k % 32 == 0,
    }
}

/// The bits of instruction `i` that may differ between the lanes of an aligned warp, when
/// `i` takes an aligned value (`32a + lane`: bits 0-4 are the lane, the rest `a`'s) or one
/// with known lane bits (`lanes`) through a shift or mask by a constant, or a cast: `0` is a
/// uniform result. Triton's `((%tid.x >> 3) & 12)` (the warp's word of a reduction scratch:
/// `(%tid.x >> 5) * 4`) keeps none of the lane's bits, so the store of each warp's partial
/// there is one lane's store, not a scatter of 32 lanes to one address.
unsafe fn lane_bits(
    i: LLVMValueRef,
    op: O,
    aligned: &HashSet<LLVMValueRef>,
    lanes: &HashMap<LLVMValueRef, u64>,
) -> Option<u64> {
    if !matches!(
        op,
        O::LLVMLShr
            | O::LLVMAShr
            | O::LLVMShl
            | O::LLVMAnd
            | O::LLVMOr
            | O::LLVMXor
            | O::LLVMZExt
            | O::LLVMSExt
            | O::LLVMTrunc
    ) {
        return None;
    }
    let t = c::LLVMTypeOf(i);
    if c::LLVMGetTypeKind(t) != llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind {
        return None;
    }
    let ops = ir::operands(i);
    let of = |v: LLVMValueRef| {
        if aligned.contains(&v) {
            Some(31u64)
        } else {
            lanes.get(&v).copied()
        }
    };
    let w = c::LLVMGetIntTypeWidth(t);
    let width = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
    // A sign bit among the lane's bits spreads to every bit an extension or `ashr` fills.
    let signed = |v: LLVMValueRef, m: u64| {
        let sw = c::LLVMGetIntTypeWidth(c::LLVMTypeOf(v));
        sw <= 64 && m >> (sw - 1) & 1 != 0
    };
    match op {
        O::LLVMZExt | O::LLVMSExt | O::LLVMTrunc => {
            let m = of(ops[0])?;
            if op == O::LLVMSExt && signed(ops[0], m) {
                return None;
            }
            Some(m & width)
        }
        O::LLVMAnd | O::LLVMOr | O::LLVMXor => {
            let (m, k) = match (of(ops[0]), of(ops[1])) {
                (Some(m), None) => (m, ir::const_u64(ops[1])?),
                (None, Some(m)) => (m, ir::const_u64(ops[0])?),
                _ => return None,
            };
            Some(if op == O::LLVMAnd { m & k } else { m })
        }
        _ => {
            let m = of(ops[0])?;
            let k = ir::const_u64(ops[1])?;
            if k >= w as u64 {
                return None;
            }
            match op {
                O::LLVMShl => Some((m << k) & width),
                O::LLVMAShr if signed(ops[0], m) => None,
                _ => Some(m >> k),
            }
        }
    }
}

/// Whether comparison `i` has the same result in every lane because it orders an aligned
/// value (`32a + lane`, `a` the same in every lane) against a constant at a multiple of 32:
/// `x < 32k` is `a < k` (signed too: the sign bit is one of `a`'s), `x <= 32k + 31` is
/// `a <= k`.
unsafe fn aligned_compare(i: LLVMValueRef, aligned: &HashSet<LLVMValueRef>) -> bool {
    use llvm_sys::LLVMIntPredicate as P;
    let ops = ir::operands(i);
    let (k, swapped) = if aligned.contains(&ops[0]) {
        (ops[1], false)
    } else if aligned.contains(&ops[1]) {
        (ops[0], true)
    } else {
        return false;
    };
    let Some(k) = ir::const_u64(k) else {
        return false;
    };
    // `x < k` needs k at a multiple of 32, `x <= k` needs k + 1 there; `k < x` is `x > k`.
    let below = match c::LLVMGetICmpPredicate(i) {
        P::LLVMIntULT | P::LLVMIntUGE | P::LLVMIntSLT | P::LLVMIntSGE => !swapped,
        P::LLVMIntULE | P::LLVMIntUGT | P::LLVMIntSLE | P::LLVMIntSGT => swapped,
        _ => return false,
    };
    k % 32 == if below { 0 } else { 31 }
}
