//! A copy of the kernel for warps whose lanes all take the expected side of every bounds
//! check (issue 17). A stencil or convolution without shared memory tests each tap
//! (`if (r >= 0 && r < h && c >= 0 && c < w) s += in[r * w + c] * m[k]`: 25 branches for a
//! 5x5 mask) and returns early past the image's edge. Each such branch is divergent in the
//! warp function: a mask, a skip test, a whole-warp test per load, blends (about 30
//! instructions around a tap's two loads and two adds), yet every warp off the image's border
//! takes each branch the same way in all its lanes.
//!
//! So when every divergent branch of a kernel without CTA barriers is such a check — its
//! condition a pure function of the entry block's values (after the unrolling, a tap's
//! `row + i` with `i` a constant), and *convex in the lane* on the side a warp off the border
//! takes (`expected`: the side that does not return, else the one that does work rather than
//! go straight to the join): an AND of compares of one stepping value with a uniform one
//! (`convex`) — the entry block ends in a branch on `EVERY` to a copy of the body in which
//! each such branch goes its expected way unconditionally. The copy is straight-line code,
//! which the warp function runs with the constant mask of all lanes (`emit.rs`:
//! `Warp::whole_region`): plain vector loads and stores, no blends. Warps on the border run
//! the original, whose branches carry their expected side as metadata (`SIDE_TRUE`,
//! `SIDE_FALSE`).
//!
//! `EVERY` is lowered by the warp function (`Warp::every`, from `lanes/calls.rs`) to one scalar test: all 32
//! lanes run, and each marked branch's condition, rebuilt as scalar code from the entry
//! block's values, takes the expected side in lanes 0 and 31, whose stepping values lie
//! beyond one another in their step's direction (no wrap between them). A convex condition
//! that holds at both ends holds in every lane between. Under row segments (16x16 or 8x32
//! blocks: strides hold within each row of lanes, `%tid.y` one value per row) the same holds
//! row by row, and the test takes each row's first and last lane. Nothing is hoisted in the
//! IR, so neither CSE nor the thread-loop fallback sees the conditions twice: elsewhere
//! (thread loops, coroutines, a warp function whose strides do not show the condition
//! convex) `EVERY` is false and the copy never runs.

use std::collections::HashMap;

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode as O;

use super::cfg::Cfg;
use super::emit::Warp;
use super::ir;
use super::uniform::Facts;

/// `i1 ()`: whether all 32 lanes run and take the expected side of every marked branch (a
/// scalar): the copy's way in.
pub const EVERY: &str = "ptx2llvm.simd.every";
/// Metadata on an original branch whose expected side is its true successor.
pub const SIDE_TRUE: &std::ffi::CStr = c"ptx2llvm.interior.true";
/// Metadata on an original branch whose expected side is its false successor.
pub const SIDE_FALSE: &std::ffi::CStr = c"ptx2llvm.interior.false";

/// Divergent branches a kernel needs for the copy: one or two are left to the warp function's
/// own tests, which cost less than the copy's compile time.
const MIN_BRANCHES: usize = 4;

/// Instructions the kernel may have: the copy doubles them (compile time).
const MAX_SIZE: usize = 1500;

/// Operations in one condition's tree (compile time of `every`'s scalar rebuilds of it).
const MAX_TREE: usize = 48;

/// What `version` did: the branches the copy made constant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Copied {
    pub branches: usize,
}

/// Makes the copy (module doc) when kernel `f` has the shape. `general` are its facts for
/// any block (which branches may diverge: `%tid.y` varies inside a warp of a row-segment
/// block), `facts` its aligned-warp ones (lane strides, for the convexity the warp function
/// then tests with the facts of the block it is built for).
///
/// # Safety
/// `f` is a defined function in the cleaned form `cfg` describes, one return block.
pub unsafe fn version(
    f: LLVMValueRef,
    cfg: &Cfg,
    general: &Facts,
    facts: &Facts,
) -> Option<Copied> {
    let entry = cfg.blocks[0];
    if cfg.size() > MAX_SIZE {
        return None;
    }
    // The one return block, which both copies share: only `ret void` in it.
    let ret = cfg.lone_return()?;
    let ret_bb = cfg.blocks[ret];
    let mut branches = Vec::new();
    for (x, &bb) in cfg.blocks.iter().enumerate() {
        for i in ir::instructions(bb) {
            if !c::LLVMIsACallInst(i).is_null()
                && matches!(
                    super::uniform::call_kind(i),
                    super::uniform::CallKind::Barrier(_)
                )
            {
                return None;
            }
        }
        let t = c::LLVMGetBasicBlockTerminator(bb);
        if x == ret || ir::opcode(t) != O::LLVMBr || c::LLVMIsConditional(t) == 0 {
            continue;
        }
        let cond = c::LLVMGetCondition(t);
        if !general.is_varying(cond) {
            continue;
        }
        // Every divergent branch is a check, or the copy would keep masks.
        let mut budget = MAX_TREE;
        let side = expected(cfg, x, ret);
        let mut leaves = Vec::new();
        if !hoistable(cond, entry, &mut budget) || !convex(cond, side, facts, &mut leaves) {
            return None;
        }
        branches.push((t, side));
    }
    if branches.len() < MIN_BRANCHES {
        return None;
    }
    apply(f, cfg, entry, ret_bb, &branches);
    Some(Copied {
        branches: branches.len(),
    })
}

/// The side of block `x`'s branch a warp off the border takes in every lane: not the return
/// block `ret` nor the branch's join (an `if` without `else` does its work on the other
/// side) when the true successor is one of those, else the true side.
fn expected(cfg: &Cfg, x: usize, ret: usize) -> bool {
    let t = cfg.succ[x][0];
    !(t == ret || t == cfg.ipdom[x])
}

/// A stepping integer a convex condition compares with a uniform one: lanes 0 and 31 must
/// lie beyond one another in the step's direction, in the compare's signedness.
#[derive(Clone, Copy, Debug)]
pub struct Leaf {
    pub v: LLVMValueRef,
    pub step: i64,
    pub signed: bool,
    /// A uniform value `v` must differ from in every lane (a `!=` that must hold): checked
    /// outside the range lanes 0 and 31 span, not at the two ends.
    pub avoid: Option<LLVMValueRef>,
}

/// Whether the lanes where `v` is `side` form one run of lanes (given no wrap between lane 0
/// and lane 31 of each stepping value, `leaves`): `v` uniform; an AND (for `side` true; an OR
/// for false) of such conditions, or one with a uniform operand; a negation; a compare of one
/// stepping integer (lane strides) with a uniform one, where `==` is one lane and `!=` its
/// complement; or the sign test of an OR, `(a | b) < 0`, which is `a < 0 || b < 0`.
pub unsafe fn convex(v: LLVMValueRef, side: bool, facts: &Facts, leaves: &mut Vec<Leaf>) -> bool {
    if run_uniform(v, facts) {
        return true;
    }
    if !ir::is_instruction(v) {
        return false;
    }
    let opnd = |k: u32| c::LLVMGetOperand(v, k);
    match ir::opcode(v) {
        O::LLVMFreeze => convex(opnd(0), side, facts, leaves),
        O::LLVMXor if ir::const_u64(opnd(1)) == Some(1) && is_i1(v) => {
            convex(opnd(0), !side, facts, leaves)
        }
        // `side` true of an AND, false of an OR: both operands so.
        O::LLVMAnd | O::LLVMOr if is_i1(v) => {
            let both = side == (ir::opcode(v) == O::LLVMAnd);
            let (a, b) = (opnd(0), opnd(1));
            if both {
                convex(a, side, facts, leaves) && convex(b, side, facts, leaves)
            } else if run_uniform(a, facts) {
                convex(b, side, facts, leaves)
            } else if run_uniform(b, facts) {
                convex(a, side, facts, leaves)
            } else {
                false
            }
        }
        O::LLVMICmp => {
            use llvm_sys::LLVMIntPredicate as P;
            let pred = c::LLVMGetICmpPredicate(v);
            let (a, b) = (opnd(0), opnd(1));
            // `(x | y) < 0` (or `> -1`): the sign bits of `x` and `y`.
            let sign = match (pred, ir::const_u64(b)) {
                (P::LLVMIntSLT, Some(0)) => Some(true),
                (P::LLVMIntSGT, Some(m)) if is_all_ones(b, m) => Some(false),
                _ => None,
            };
            if let Some(negative) = sign {
                if ir::is_instruction(a) && ir::opcode(a) == O::LLVMOr && facts.is_varying(a) {
                    // Negative is an OR of the two signs, non-negative an AND.
                    let (x, y) = (c::LLVMGetOperand(a, 0), c::LLVMGetOperand(a, 1));
                    let and = side != negative;
                    let ok = |z: LLVMValueRef, leaves: &mut Vec<Leaf>| {
                        run_uniform(z, facts) || stepping(z, true, facts, leaves)
                    };
                    return if and {
                        ok(x, leaves) && ok(y, leaves)
                    } else if run_uniform(x, facts) {
                        ok(y, leaves)
                    } else if run_uniform(y, facts) {
                        ok(x, leaves)
                    } else {
                        false
                    };
                }
            }
            let signed = matches!(
                pred,
                P::LLVMIntSLT | P::LLVMIntSLE | P::LLVMIntSGT | P::LLVMIntSGE
            );
            let point = match pred {
                P::LLVMIntEQ => Some(true),
                P::LLVMIntNE => Some(false),
                _ => None,
            };
            let signed = signed || point.is_some();
            let (x, u) = match (run_uniform(a, facts), run_uniform(b, facts)) {
                (false, true) => (a, b),
                (true, false) => (b, a),
                _ => return false,
            };
            if !stepping(x, signed, facts, leaves) {
                return false;
            }
            // `==` true is one lane; `!=` true two runs around one, which holds in every
            // lane exactly when the uniform value is outside the lanes' range.
            if point.is_some_and(|p| p != side) {
                if let Some(l) = leaves.last_mut() {
                    l.avoid = Some(u);
                }
            }
            true
        }
        _ => false,
    }
}

/// Whether `v` has one value in each run the strides hold in (the warp, or each row of a
/// row-segment block: `%tid.y` there): uniform, an integer whose lane step is 0, or a
/// compare or logic operation on such values.
unsafe fn run_uniform(v: LLVMValueRef, facts: &Facts) -> bool {
    if !facts.is_varying(v) {
        return true;
    }
    if !ir::is_instruction(v) {
        return false;
    }
    let t = c::LLVMTypeOf(v);
    if c::LLVMGetTypeKind(t) != llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind {
        return false;
    }
    let op = ir::opcode(v);
    if is_i1(v) && matches!(op, O::LLVMICmp | O::LLVMAnd | O::LLVMOr | O::LLVMXor) {
        return (0..2).all(|k| run_uniform(c::LLVMGetOperand(v, k), facts));
    }
    matches!(
        facts.strides.of(v, &facts.varying),
        Some(s) if s.step == 0 && s.casts == 0
    )
}

unsafe fn is_i1(v: LLVMValueRef) -> bool {
    let t = c::LLVMTypeOf(v);
    c::LLVMGetTypeKind(t) == llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind
        && c::LLVMGetIntTypeWidth(t) == 1
}

/// Whether constant `v`, whose zero-extended value is `m`, has every bit set.
unsafe fn is_all_ones(v: LLVMValueRef, m: u64) -> bool {
    let w = c::LLVMGetIntTypeWidth(c::LLVMTypeOf(v));
    w <= 64 && m == u64::MAX >> (64 - w)
}

/// Whether integer `x` steps by a constant across the 32 lanes (no widening cast on the way,
/// at most 64 bits): a leaf of a convex condition.
unsafe fn stepping(x: LLVMValueRef, signed: bool, facts: &Facts, leaves: &mut Vec<Leaf>) -> bool {
    let t = c::LLVMTypeOf(x);
    if c::LLVMGetTypeKind(t) != llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind
        || c::LLVMGetIntTypeWidth(t) > 64
    {
        return false;
    }
    match facts.strides.of(x, &facts.varying) {
        Some(s) if s.casts == 0 && s.step.unsigned_abs() <= 1 << 24 => {
            leaves.push(Leaf {
                v: x,
                step: s.step,
                signed,
                avoid: None,
            });
            true
        }
        _ => false,
    }
}

/// Whether `v` is computed from values of block `entry` (or constants and arguments) by
/// operations that cannot trap or read memory.
unsafe fn hoistable(v: LLVMValueRef, entry: LLVMBasicBlockRef, budget: &mut usize) -> bool {
    if !ir::is_instruction(v) || c::LLVMGetInstructionParent(v) == entry {
        return true;
    }
    if *budget == 0 || !pure(ir::opcode(v)) {
        return false;
    }
    *budget -= 1;
    ir::operands(v)
        .into_iter()
        .all(|o| hoistable(o, entry, budget))
}

fn pure(op: O) -> bool {
    ir::int_binop(op)
        || ir::lanewise_cast(op)
        || matches!(
            op,
            O::LLVMICmp
                | O::LLVMFCmp
                | O::LLVMSelect
                | O::LLVMFreeze
                | O::LLVMFAdd
                | O::LLVMFSub
                | O::LLVMFMul
                | O::LLVMFNeg
                | O::LLVMGetElementPtr
        )
}

/// The `i1 ()` function `EVERY` of the module, defined (returning false: thread loops and
/// coroutines never take the copy) if it is not yet.
unsafe fn every_fn(m: LLVMModuleRef) -> (LLVMTypeRef, LLVMValueRef) {
    ir::false_fn(m, EVERY)
}

/// The metadata kind of a branch's expected side.
pub unsafe fn side_kind(cx: LLVMContextRef, side: bool) -> u32 {
    let k = if side { SIDE_TRUE } else { SIDE_FALSE };
    c::LLVMGetMDKindIDInContext(cx, k.as_ptr(), k.count_bytes() as u32)
}

unsafe fn apply(
    f: LLVMValueRef,
    cfg: &Cfg,
    entry: LLVMBasicBlockRef,
    ret_bb: LLVMBasicBlockRef,
    branches: &[(LLVMValueRef, bool)],
) {
    let m = c::LLVMGetGlobalParent(f);
    let cx = c::LLVMGetModuleContext(m);
    let b = c::LLVMCreateBuilderInContext(cx);
    let n = c"".as_ptr();
    let empty = c::LLVMMDNodeInContext2(cx, std::ptr::null_mut(), 0);
    for &(t, side) in branches {
        c::LLVMSetMetadata(t, side_kind(cx, side), c::LLVMMetadataAsValue(cx, empty));
    }
    let term = c::LLVMGetBasicBlockTerminator(entry);
    c::LLVMPositionBuilderBefore(b, term);
    let (eft, every) = every_fn(m);
    let all = c::LLVMBuildCall2(b, eft, every, std::ptr::null_mut(), 0, n);
    // The entry's terminator moves to a block of its own (the original's way in); the copy's
    // way in is a clone of it.
    let slow = c::LLVMAppendBasicBlockInContext(cx, f, c"interior.no".as_ptr());
    let fast = c::LLVMAppendBasicBlockInContext(cx, f, c"interior.yes".as_ptr());
    c::LLVMInstructionRemoveFromParent(term);
    c::LLVMPositionBuilderAtEnd(b, slow);
    c::LLVMInsertIntoBuilder(b, term);
    c::LLVMPositionBuilderAtEnd(b, entry);
    c::LLVMBuildCondBr(b, all, fast, slow);
    // Phis of the entry's successors now come from `slow`.
    for s in ir::successors(slow) {
        retarget_phis(b, s, entry, slow);
    }
    // The copy: every block but the entry and the return block.
    let mut map: HashMap<LLVMValueRef, LLVMValueRef> = HashMap::new();
    let mut blocks: HashMap<LLVMBasicBlockRef, LLVMBasicBlockRef> = HashMap::new();
    blocks.insert(slow, fast);
    blocks.insert(ret_bb, ret_bb);
    let originals: Vec<LLVMBasicBlockRef> = std::iter::once(slow)
        .chain(
            cfg.blocks
                .iter()
                .copied()
                .filter(|&bb| bb != entry && bb != ret_bb),
        )
        .collect();
    for &bb in &originals[1..] {
        blocks.insert(
            bb,
            c::LLVMAppendBasicBlockInContext(cx, f, c"interior.copy".as_ptr()),
        );
    }
    let mut made = Vec::new();
    let mut phis = Vec::new();
    for &bb in &originals {
        c::LLVMPositionBuilderAtEnd(b, blocks[&bb]);
        for i in ir::instructions(bb) {
            let x = if ir::opcode(i) == O::LLVMPHI {
                let x = c::LLVMBuildPhi(b, c::LLVMTypeOf(i), n);
                phis.push((i, x));
                x
            } else {
                let x = c::LLVMInstructionClone(i);
                c::LLVMInsertIntoBuilder(b, x);
                made.push(x);
                x
            };
            map.insert(i, x);
        }
    }
    ir::remap_clones(&made, &map, &blocks);
    for &(i, x) in &phis {
        ir::copy_incoming(i, x, &map, &blocks);
    }
    // In the copy each such branch goes its expected way, unconditionally; the other way's
    // phis lose the edge.
    for &(t, side) in branches {
        let x = map[&t];
        c::LLVMSetMetadata(x, side_kind(cx, side), std::ptr::null_mut());
        let from = c::LLVMGetInstructionParent(x);
        let (to, other) = if side {
            (c::LLVMGetSuccessor(x, 0), c::LLVMGetSuccessor(x, 1))
        } else {
            (c::LLVMGetSuccessor(x, 1), c::LLVMGetSuccessor(x, 0))
        };
        c::LLVMPositionBuilderBefore(b, x);
        c::LLVMBuildBr(b, to);
        c::LLVMInstructionEraseFromParent(x);
        if other != to {
            drop_incoming(b, other, from);
        }
    }
    prune(b, f, fast);
    c::LLVMDisposeBuilder(b);
}

/// Deletes the blocks of `f` its entry no longer reaches (the copy's untaken sides, all
/// after `first`), their edges out of the phis of the blocks that stay.
unsafe fn prune(b: LLVMBuilderRef, f: LLVMValueRef, first: LLVMBasicBlockRef) {
    let all = ir::blocks(f);
    let mut seen: std::collections::HashSet<LLVMBasicBlockRef> = std::collections::HashSet::new();
    let mut work = vec![all[0]];
    seen.insert(all[0]);
    while let Some(bb) = work.pop() {
        for s in ir::successors(bb) {
            if seen.insert(s) {
                work.push(s);
            }
        }
    }
    let dead: Vec<LLVMBasicBlockRef> = all
        .iter()
        .copied()
        .skip_while(|&bb| bb != first)
        .filter(|bb| !seen.contains(bb))
        .collect();
    for &bb in &dead {
        for s in ir::successors(bb) {
            if seen.contains(&s) {
                drop_incoming(b, s, bb);
            }
        }
    }
    for &bb in &dead {
        for i in ir::instructions(bb) {
            c::LLVMReplaceAllUsesWith(i, c::LLVMGetPoison(c::LLVMTypeOf(i)));
        }
    }
    for &bb in &dead {
        c::LLVMDeleteBasicBlock(bb);
    }
}

/// Rebuilds the phis of block `s` without their incoming edges from `from`.
unsafe fn drop_incoming(b: LLVMBuilderRef, s: LLVMBasicBlockRef, from: LLVMBasicBlockRef) {
    for p in ir::instructions(s) {
        if ir::opcode(p) != O::LLVMPHI {
            break;
        }
        c::LLVMPositionBuilderBefore(b, p);
        let incoming: Vec<(LLVMValueRef, LLVMBasicBlockRef)> = (0..c::LLVMCountIncoming(p))
            .map(|k| (c::LLVMGetIncomingValue(p, k), c::LLVMGetIncomingBlock(p, k)))
            .filter(|&(_, bb)| bb != from)
            .collect();
        let q = ir::phi(b, c::LLVMTypeOf(p), c"".as_ptr(), &incoming);
        c::LLVMReplaceAllUsesWith(p, q);
        c::LLVMInstructionEraseFromParent(p);
    }
}

/// Rebuilds the phis of block `s` with their incoming block `from` replaced by `to` (a phi's
/// incoming blocks are not operands, so the C API cannot set them).
unsafe fn retarget_phis(
    b: LLVMBuilderRef,
    s: LLVMBasicBlockRef,
    from: LLVMBasicBlockRef,
    to: LLVMBasicBlockRef,
) {
    for p in ir::instructions(s) {
        if ir::opcode(p) != O::LLVMPHI {
            break;
        }
        c::LLVMPositionBuilderBefore(b, p);
        let incoming: Vec<(LLVMValueRef, LLVMBasicBlockRef)> = (0..c::LLVMCountIncoming(p))
            .map(|k| {
                let bb = c::LLVMGetIncomingBlock(p, k);
                (
                    c::LLVMGetIncomingValue(p, k),
                    if bb == from { to } else { bb },
                )
            })
            .collect();
        let q = ir::phi(b, c::LLVMTypeOf(p), c"".as_ptr(), &incoming);
        c::LLVMReplaceAllUsesWith(p, q);
        c::LLVMInstructionEraseFromParent(p);
    }
}

impl Warp<'_> {
    /// `EVERY` at the end of the entry block (module doc): all 32 lanes run, and for each
    /// marked branch its condition, rebuilt for lanes 0 and 31 as scalar code, takes the
    /// expected side, with each stepping value's lane 31 beyond its lane 0 in the step's
    /// direction; under row segments (`Facts::segment`, strides within each row of `S`
    /// lanes) the same for the first and last lane of each row. False where the strides do
    /// not show a condition convex.
    pub(super) unsafe fn every(&mut self) -> LLVMValueRef {
        use llvm_sys::LLVMIntPredicate as P;
        let b = self.b;
        let n = c"".as_ptr();
        let no = c::LLVMConstInt(self.i1, 0, 0);
        let (kt, kf) = (side_kind(self.cx, true), side_kind(self.cx, false));
        let mut marked = Vec::new();
        for &bb in &self.cfg.blocks {
            let t = c::LLVMGetBasicBlockTerminator(bb);
            if t.is_null() || ir::opcode(t) != O::LLVMBr || c::LLVMIsConditional(t) == 0 {
                continue;
            }
            if !c::LLVMGetMetadata(t, kt).is_null() {
                marked.push((c::LLVMGetCondition(t), true));
            } else if !c::LLVMGetMetadata(t, kf).is_null() {
                marked.push((c::LLVMGetCondition(t), false));
            }
        }
        if marked.is_empty() {
            return no;
        }
        // The runs the strides hold in: the warp, or each row of a row-segment block.
        let width = self.facts.segment.map_or(32, |g| u64::from(g.width));
        let ends: Vec<(u64, u64)> = (0..32 / width)
            .map(|k| (k * width, k * width + width - 1))
            .collect();
        let all = self.c32(u32::MAX as u64);
        let bits = self.bits(self.mask);
        // The terms, ANDed as a balanced tree at the end: a chain of hundreds made
        // InstCombine's implication queries quadratic (compile time).
        let mut terms = vec![c::LLVMBuildICmp(b, P::LLVMIntEQ, bits, all, n)];
        let mut memo = HashMap::new();
        let mut tested = std::collections::HashSet::new();
        for (cond, side) in marked {
            let mut leaves = Vec::new();
            if !convex(cond, side, self.facts, &mut leaves) {
                return no;
            }
            for &(first, last) in &ends {
                for lane in [first, last] {
                    let e = self.interior_lane(cond, lane, &mut memo);
                    terms.push(if side { e } else { c::LLVMBuildNot(b, e, n) });
                }
            }
            for (l, &(first, last)) in leaves.iter().flat_map(|l| ends.iter().map(move |e| (l, e)))
            {
                if l.step == 0 || !tested.insert((l.v, l.signed, l.avoid, first)) {
                    continue;
                }
                let a0 = self.interior_lane(l.v, first, &mut memo);
                let a31 = self.interior_lane(l.v, last, &mut memo);
                let (lo, hi) = if l.step > 0 { (a0, a31) } else { (a31, a0) };
                let (ge, gt, lt) = if l.signed {
                    (P::LLVMIntSGE, P::LLVMIntSGT, P::LLVMIntSLT)
                } else {
                    (P::LLVMIntUGE, P::LLVMIntUGT, P::LLVMIntULT)
                };
                terms.push(c::LLVMBuildICmp(b, ge, hi, lo, n));
                if let Some(u) = l.avoid {
                    // One value per row under row segments: the row's own.
                    let u = self.interior_lane(u, first, &mut memo);
                    let below = c::LLVMBuildICmp(b, lt, u, lo, n);
                    let above = c::LLVMBuildICmp(b, gt, u, hi, n);
                    terms.push(c::LLVMBuildOr(b, below, above, n));
                }
            }
        }
        while terms.len() > 1 {
            terms = terms
                .chunks(2)
                .filter_map(|p| p.iter().copied().reduce(|x, y| c::LLVMBuildAnd(b, x, y, n)))
                .collect();
        }
        let ok = terms.pop().unwrap_or(no);
        // The rebuilt code keeps the originals' `nsw`-like flags: a lane they do not hold in
        // makes poison, which the test must not branch on (it then goes either way: both
        // are correct for a lane the original never sends there).
        c::LLVMBuildFreeze(b, ok, n)
    }

    /// Lane `lane`'s value of `v`, a scalar built at the builder: a uniform or varying value
    /// of the entry block (or an argument or constant) as the warp function has it, else a
    /// copy of `v` (a pure operation: `hoistable`) on its operands' lane values.
    unsafe fn interior_lane(
        &mut self,
        v: LLVMValueRef,
        lane: u64,
        memo: &mut HashMap<(LLVMValueRef, u64), LLVMValueRef>,
    ) -> LLVMValueRef {
        let varying = self.facts.is_varying(v);
        let key = (v, if varying { lane } else { 0 });
        if let Some(&x) = memo.get(&key) {
            return x;
        }
        let entry = self.cfg.blocks[0];
        let x = if !ir::is_instruction(v) || c::LLVMGetInstructionParent(v) == entry {
            if varying {
                let vec = self.get(v, true);
                let k = c::LLVMConstInt(self.i32, lane, 0);
                c::LLVMBuildExtractElement(self.b, vec, k, c"".as_ptr())
            } else {
                self.get(v, false)
            }
        } else {
            let ops: Vec<LLVMValueRef> = ir::operands(v)
                .into_iter()
                .map(|o| self.interior_lane(o, lane, memo))
                .collect();
            let x = c::LLVMInstructionClone(v);
            for (k, o) in ops.into_iter().enumerate() {
                c::LLVMSetOperand(x, k as u32, o);
            }
            c::LLVMInsertIntoBuilder(self.b, x);
            x
        };
        memo.insert(key, x);
        x
    }
}
