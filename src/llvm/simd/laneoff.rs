//! Vector phis that a loop steps by one scalar in every lane, kept as lane 0's scalar plus
//! the lanes' offsets from it, which the loop does not change (issue 17), in the optimized
//! module.
//!
//! A pointer that a PTX loop advances (`add.s64 %rd42, %rd42, 128`) is a `<32 x i64>` phi in
//! the warp function, every lane stepped by the same scalar on every edge (`Strides::whole`),
//! and an access through it whose lanes are tested at run time (`lanes.rs`: `Checked`) reads
//! lanes 0 and 31 for the test and the whole vector only for the gather on the test's other
//! side. The phi and its step are still four 512-bit registers and four `vpaddq` per
//! iteration, plus copies where the loop's paths meet, and the test is redone in every
//! iteration although it cannot change: spmv_warp (a warp per CSR row, one or two iterations
//! per row) carried two such pointers through three loop versions (remainder loop, its
//! full-warp copy, the unrolled loop), some 60 vector instructions per row.
//!
//! Here a *family* is a vector phi `P` of a loop header with one incoming value `V` from a
//! block `B` other than the header, and the values that are `P` plus a scalar in every lane:
//! `m + splat(u)`, `m - splat(u)`, `select i1 c, m1, m2` (a scalar condition) and phis of
//! members, where every incoming value on the other edges of `P` is a member. Then every
//! lane `l` of a member is lane 0's plus `V[l] - V[0]` (modulo 2^n, exactly: each step adds
//! the same scalar to all lanes), and that offset vector `D` is computed once, after `V`.
//! Each member gets a scalar twin (lane 0: the same adds, selects and phis on scalars), a
//! read of lane `k` becomes the twin plus `D[k]` (the test `p[31] - p[0]` folds to `D[31]`,
//! loop-invariant), and any other use gets `splat(twin) + D` built at the use (the gather's
//! cold block; a join). The vector phis and steps go. A loop after another (the full-warp
//! copy, then the general loop) enters with the first loop's exit value or the value that
//! skipped it, both with the same `D` (`known`): its twin's entry is a phi of theirs, and no
//! vector is rebuilt between the loops.
//!
//! Why every use sees the right `D`: `B` dominates the header (the first entry comes through
//! it: the other edges come from blocks the header dominates), and `V`, hence `D`, dominates
//! the end of `B`, so `D` dominates every member and use; and a use dominated by a member is
//! reached from `B`'s last run only through that member's definition, so the twin and `D` it
//! sees belong to the same entry of the loop.
//!
//! Only families of tested accesses are rewritten: with a lane read and a gather's or
//! scatter's use, and no use of the whole vector elsewhere than there or in a join. Others are
//! left as they are: their vectors are what the code needs (a lane-wise compare of an index
//! would pay a broadcast and an add per use where the loop paid one add: layernorm x1.13
//! slower), or LLVM scalarizes a phi read in lane 0 alone itself (a consecutive access;
//! rewritten here, NVRTC's pointer loops of the held-out layernorm_warp ran x1.4 slower from
//! the kernel cache's objects, level under MCJIT: not understood).
//!
//! spmv_warp, CPU per launch from the kernel cache's objects, 15 alternated pairs: x0.976
//! (0.92-1.07; ratio of the minima 0.963).

use std::collections::{HashMap, HashSet};

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMOpcode as O, LLVMTypeKind};

use super::ir;

/// Rewrites the families of the functions of `m`; returns how many.
pub unsafe fn fold(m: LLVMModuleRef) -> usize {
    let cx = c::LLVMGetModuleContext(m);
    let b = c::LLVMCreateBuilderInContext(cx);
    let mut n = 0;
    for f in ir::functions(m) {
        let mut known = HashMap::new();
        let mut gone = HashSet::new();
        for p in header_phis(f) {
            if !gone.contains(&p) {
                if let Some(members) = rewrite(b, p, &mut known) {
                    gone.extend(members);
                    n += 1;
                }
            }
        }
    }
    c::LLVMDisposeBuilder(b);
    n
}

/// The integer vector phis of `f`, their blocks in reverse post-order: a loop's family comes
/// before that of a loop after it, whose entry value may be the first one's exit value
/// (`known`).
unsafe fn header_phis(f: LLVMValueRef) -> Vec<LLVMValueRef> {
    let blocks = ir::blocks(f);
    if blocks.is_empty() {
        return Vec::new();
    }
    let index: HashMap<_, _> = blocks.iter().enumerate().map(|(k, &bb)| (bb, k)).collect();
    let succ: Vec<Vec<usize>> = blocks
        .iter()
        .map(|&bb| ir::successors(bb).iter().map(|s| index[s]).collect())
        .collect();
    super::cfg::rpo(blocks.len(), 0, &succ)
        .into_iter()
        .flat_map(|k| ir::instructions(blocks[k]))
        .filter(|&i| ir::opcode(i) == O::LLVMPHI && int_vector(c::LLVMTypeOf(i)))
        .collect()
}

/// Whether `t` is a vector of integers wider than `i1` (masks step by logic, not adds).
unsafe fn int_vector(t: LLVMTypeRef) -> bool {
    if c::LLVMGetTypeKind(t) != LLVMTypeKind::LLVMVectorTypeKind {
        return false;
    }
    let e = c::LLVMGetElementType(t);
    c::LLVMGetTypeKind(e) == LLVMTypeKind::LLVMIntegerTypeKind && c::LLVMGetIntTypeWidth(e) > 1
}

/// The scalar `u` of a splat operand: a constant whose lanes are one value, or
/// `shufflevector (insertelement _, u, 0), _, zeroinitializer`.
unsafe fn splat_scalar(v: LLVMValueRef) -> Option<LLVMValueRef> {
    let n = c::LLVMGetVectorSize(c::LLVMTypeOf(v));
    if !c::LLVMIsAConstant(v).is_null() {
        let e0 = c::LLVMGetAggregateElement(v, 0);
        if e0.is_null() || c::LLVMIsAConstantInt(e0).is_null() {
            return None;
        }
        return (1..n)
            .all(|k| c::LLVMGetAggregateElement(v, k) == e0)
            .then_some(e0);
    }
    if !ir::is_instruction(v) || ir::opcode(v) != O::LLVMShuffleVector {
        return None;
    }
    if (0..n).any(|k| c::LLVMGetMaskValue(v, k) != 0) {
        return None;
    }
    let ins = c::LLVMGetOperand(v, 0);
    if !ir::is_instruction(ins) || ir::opcode(ins) != O::LLVMInsertElement {
        return None;
    }
    (ir::const_u64(c::LLVMGetOperand(ins, 2)) == Some(0)).then(|| c::LLVMGetOperand(ins, 1))
}

/// How member `m` is built from other members.
#[derive(Clone, Copy)]
enum Step {
    /// The family's phi or another phi of members.
    Phi,
    /// `m ± splat(u)`: the member operand, `u`, whether it subtracts.
    Add(LLVMValueRef, LLVMValueRef, bool),
    /// `select i1 c, a, b`.
    Select(LLVMValueRef, LLVMValueRef, LLVMValueRef),
}

/// What `v` would be as a member, given the set of candidates `set`.
unsafe fn step(v: LLVMValueRef, ty: LLVMTypeRef, set: &HashSet<LLVMValueRef>) -> Option<Step> {
    if !ir::is_instruction(v) || c::LLVMTypeOf(v) != ty {
        return None;
    }
    let op = |k| c::LLVMGetOperand(v, k);
    match ir::opcode(v) {
        O::LLVMPHI => Some(Step::Phi),
        O::LLVMAdd => {
            if set.contains(&op(0)) {
                splat_scalar(op(1)).map(|u| Step::Add(op(0), u, false))
            } else if set.contains(&op(1)) {
                splat_scalar(op(0)).map(|u| Step::Add(op(1), u, false))
            } else {
                None
            }
        }
        O::LLVMSub if set.contains(&op(0)) => {
            splat_scalar(op(1)).map(|u| Step::Add(op(0), u, true))
        }
        O::LLVMSelect
            if c::LLVMGetTypeKind(c::LLVMTypeOf(op(0))) == LLVMTypeKind::LLVMIntegerTypeKind =>
        {
            Some(Step::Select(op(0), op(1), op(2)))
        }
        _ => None,
    }
}

/// The incoming values of phi `p` with their blocks.
unsafe fn incoming(p: LLVMValueRef) -> Vec<(LLVMValueRef, LLVMBasicBlockRef)> {
    (0..c::LLVMCountIncoming(p))
        .map(|k| (c::LLVMGetIncomingValue(p, k), c::LLVMGetIncomingBlock(p, k)))
        .collect()
}

/// The family of header phi `p` (`None` when it is not one or has no lane read), rewritten;
/// returns its members, now erased.
unsafe fn rewrite(
    b: LLVMBuilderRef,
    p: LLVMValueRef,
    known: &mut HashMap<LLVMValueRef, (LLVMValueRef, LLVMValueRef)>,
) -> Option<Vec<LLVMValueRef>> {
    let ty = c::LLVMTypeOf(p);
    // Candidates: values built from `p` by member steps, then pruned to those whose member
    // operands are all candidates.
    let mut set = HashSet::from([p]);
    let mut work = vec![p];
    while let Some(v) = work.pop() {
        for u in ir::users(v) {
            if !set.contains(&u) && step(u, ty, &set).is_some() {
                set.insert(u);
                work.push(u);
            }
        }
    }
    loop {
        let drop: Vec<_> = set
            .iter()
            .copied()
            .filter(|&v| {
                v != p
                    && match step(v, ty, &set) {
                        Some(Step::Phi) => incoming(v).iter().any(|(x, _)| !set.contains(x)),
                        Some(Step::Add(..)) => false,
                        Some(Step::Select(_, x, y)) => !set.contains(&x) || !set.contains(&y),
                        None => true,
                    }
            })
            .collect();
        if drop.is_empty() {
            break;
        }
        for v in drop {
            set.remove(&v);
        }
    }
    let header = c::LLVMGetInstructionParent(p);
    let outer: Vec<_> = incoming(p)
        .into_iter()
        .filter(|(x, _)| !set.contains(x))
        .collect();
    let [(v, pre)] = outer[..] else {
        return None;
    };
    if pre == header || set.len() < 2 {
        return None;
    }
    // The uses outside the family; at least one lane read.
    let mut uses = Vec::new();
    for &m in &set {
        for u in ir::users(m) {
            if !set.contains(&u) {
                uses.push((m, u));
            }
        }
    }
    let lane = |u: LLVMValueRef| {
        ir::opcode(u) == O::LLVMExtractElement && ir::const_u64(c::LLVMGetOperand(u, 1)).is_some()
    };
    // Where the whole vector is built again: a join (a later loop's entry value, an exit) or
    // a gather's or scatter's block (the lane test's cold side). A use on the hot path (a
    // lane-wise compare of an index) would pay a broadcast and an add where the loop paid
    // one add (layernorm's `i < n` of each iteration: x1.13 slower).
    let cold = |u: LLVMValueRef| {
        ir::opcode(u) == O::LLVMPHI
            || ir::instructions(c::LLVMGetInstructionParent(u))
                .into_iter()
                .any(|i| super::coldsink::gathered_ptrs(i).is_some())
    };
    let gathers = |u: LLVMValueRef| ir::opcode(u) != O::LLVMPHI && cold(u);
    if !uses.iter().any(|&(_, u)| lane(u))
        || !uses.iter().any(|&(_, u)| gathers(u))
        || !uses.iter().all(|&(_, u)| lane(u) || cold(u))
    {
        return None;
    }
    let et = c::LLVMGetElementType(ty);
    let i32t = c::LLVMInt32TypeInContext(c::LLVMGetTypeContext(ty));
    let idx = |k: u64| c::LLVMConstInt(i32t, k, 0);
    let n = c::LLVMGetVectorSize(ty);
    let splat = |b: LLVMBuilderRef, s: LLVMValueRef| {
        let one = c::LLVMBuildInsertElement(b, c::LLVMGetPoison(ty), s, idx(0), c"".as_ptr());
        let zero = c::LLVMConstNull(c::LLVMVectorType(i32t, n));
        c::LLVMBuildShuffleVector(b, one, c::LLVMGetPoison(ty), zero, c"".as_ptr())
    };
    let (v0, d) = entry_offsets(b, v, pre, known, &splat, idx(0));
    let mut offsets: HashMap<u64, LLVMValueRef> = HashMap::new();
    // The twins: phis first (their incoming values may be built later), then the rest.
    let mut twin: HashMap<LLVMValueRef, LLVMValueRef> = HashMap::new();
    for &m in &set {
        if ir::opcode(m) == O::LLVMPHI {
            c::LLVMPositionBuilderBefore(b, m);
            twin.insert(m, c::LLVMBuildPhi(b, et, c"lane0".as_ptr()));
        }
    }
    let mut order: Vec<_> = set.iter().copied().collect();
    order.sort_by_key(|&m| usize::from(ir::opcode(m) != O::LLVMPHI));
    for &m in &order {
        build_twin(b, m, ty, &set, &mut twin);
    }
    for &m in &set {
        if ir::opcode(m) != O::LLVMPHI {
            continue;
        }
        let t = twin[&m];
        for (x, bb) in incoming(m) {
            let mut xv = if x == v { v0 } else { twin[&x] };
            let mut bbv = bb;
            c::LLVMAddIncoming(t, &mut xv, &mut bbv, 1);
        }
    }
    // The uses.
    for (m, u) in uses {
        let t = twin[&m];
        if lane(u) {
            let k = ir::const_u64(c::LLVMGetOperand(u, 1)).unwrap_or(0);
            c::LLVMPositionBuilderBefore(b, u);
            let r = if k == 0 {
                t
            } else {
                let dk = *offsets.entry(k).or_insert_with(|| {
                    position_after(b, d);
                    let e = c::LLVMBuildExtractElement(b, d, idx(k), c"".as_ptr());
                    c::LLVMPositionBuilderBefore(b, u);
                    e
                });
                c::LLVMBuildAdd(b, t, dk, c"".as_ptr())
            };
            c::LLVMReplaceAllUsesWith(u, r);
            c::LLVMInstructionEraseFromParent(u);
        } else if ir::opcode(u) == O::LLVMPHI && c::LLVMCountIncoming(u) == 1 {
            // A loop's exit value: the vector once, after the exit block's phis.
            let bb = c::LLVMGetInstructionParent(u);
            let mut at = c::LLVMGetFirstInstruction(bb);
            while ir::opcode(at) == O::LLVMPHI {
                at = c::LLVMGetNextInstruction(at);
            }
            c::LLVMPositionBuilderBefore(b, at);
            let r = c::LLVMBuildAdd(b, splat(b, t), d, c"".as_ptr());
            known.insert(r, (t, d));
            c::LLVMReplaceAllUsesWith(u, r);
            c::LLVMInstructionEraseFromParent(u);
        } else if ir::opcode(u) == O::LLVMPHI {
            for k in 0..c::LLVMCountIncoming(u) {
                if c::LLVMGetIncomingValue(u, k) == m {
                    let bb = c::LLVMGetIncomingBlock(u, k);
                    c::LLVMPositionBuilderBefore(b, c::LLVMGetBasicBlockTerminator(bb));
                    let r = c::LLVMBuildAdd(b, splat(b, t), d, c"".as_ptr());
                    known.insert(r, (t, d));
                    c::LLVMSetOperand(u, k, r);
                }
            }
        } else {
            c::LLVMPositionBuilderBefore(b, u);
            let r = c::LLVMBuildAdd(b, splat(b, t), d, c"".as_ptr());
            known.insert(r, (t, d));
            for k in 0..c::LLVMGetNumOperands(u) as u32 {
                if c::LLVMGetOperand(u, k) == m {
                    c::LLVMSetOperand(u, k, r);
                }
            }
        }
    }
    // The members now only use each other.
    let members: Vec<_> = set.into_iter().collect();
    for &m in &members {
        c::LLVMReplaceAllUsesWith(m, c::LLVMGetPoison(ty));
    }
    for &m in &members {
        known.remove(&m);
        c::LLVMInstructionEraseFromParent(m);
    }
    Some(members)
}

/// Builds the scalar twin of member `m` (phis have theirs already), before `m`.
unsafe fn build_twin(
    b: LLVMBuilderRef,
    m: LLVMValueRef,
    ty: LLVMTypeRef,
    set: &HashSet<LLVMValueRef>,
    twin: &mut HashMap<LLVMValueRef, LLVMValueRef>,
) -> LLVMValueRef {
    if let Some(&t) = twin.get(&m) {
        return t;
    }
    let t = match step(m, ty, set) {
        Some(Step::Add(x, u, sub)) => {
            let tx = build_twin(b, x, ty, set, twin);
            c::LLVMPositionBuilderBefore(b, m);
            if sub {
                c::LLVMBuildSub(b, tx, u, c"".as_ptr())
            } else {
                c::LLVMBuildAdd(b, tx, u, c"".as_ptr())
            }
        }
        Some(Step::Select(cond, x, y)) => {
            let (tx, ty_) = (
                build_twin(b, x, ty, set, twin),
                build_twin(b, y, ty, set, twin),
            );
            c::LLVMPositionBuilderBefore(b, m);
            c::LLVMBuildSelect(b, cond, tx, ty_, c"".as_ptr())
        }
        _ => unreachable!("a member phi has its twin before the others are built"),
    };
    twin.insert(m, t);
    t
}

/// Lane 0 and the lane offsets of a family's entry value `v` (from block `pre`): known
/// already when `v` is a member rebuilt by an earlier family (`splat(t) + D`) or that family's
/// own entry value, or a phi of such values with one `D` (a loop after another: its entry
/// value is the first loop's exit value or the value that skipped it); else `v[0]` and
/// `v - splat(v[0])`, built after `v`.
unsafe fn entry_offsets(
    b: LLVMBuilderRef,
    v: LLVMValueRef,
    pre: LLVMBasicBlockRef,
    known: &mut HashMap<LLVMValueRef, (LLVMValueRef, LLVMValueRef)>,
    splat: &dyn Fn(LLVMBuilderRef, LLVMValueRef) -> LLVMValueRef,
    zero: LLVMValueRef,
) -> (LLVMValueRef, LLVMValueRef) {
    if let Some(&k) = known.get(&v) {
        return k;
    }
    if ir::is_instruction(v) && ir::opcode(v) == O::LLVMPHI {
        let ins = incoming(v);
        let parts: Option<Vec<_>> = ins.iter().map(|(x, _)| known.get(x).copied()).collect();
        if let Some(parts) = parts {
            if let Some(&(_, d)) = parts.first() {
                if parts.iter().all(|&(_, dx)| dx == d) {
                    c::LLVMPositionBuilderBefore(b, v);
                    let v0 = c::LLVMBuildPhi(b, c::LLVMTypeOf(parts[0].0), c"lane0".as_ptr());
                    for (&(t, _), &(_, bb)) in parts.iter().zip(&ins) {
                        let (mut t, mut bb) = (t, bb);
                        c::LLVMAddIncoming(v0, &mut t, &mut bb, 1);
                    }
                    known.insert(v, (v0, d));
                    return (v0, d);
                }
            }
        }
    }
    if ir::is_instruction(v) {
        position_after(b, v);
    } else {
        c::LLVMPositionBuilderBefore(b, c::LLVMGetBasicBlockTerminator(pre));
    }
    let v0 = c::LLVMBuildExtractElement(b, v, zero, c"lane0".as_ptr());
    let d = c::LLVMBuildSub(b, v, splat(b, v0), c"lane.offsets".as_ptr());
    known.insert(v, (v0, d));
    (v0, d)
}

/// Positions `b` right after instruction `v` (after all phis when `v` is one).
unsafe fn position_after(b: LLVMBuilderRef, v: LLVMValueRef) {
    let mut at = c::LLVMGetNextInstruction(v);
    while ir::opcode(at) == O::LLVMPHI {
        at = c::LLVMGetNextInstruction(at);
    }
    c::LLVMPositionBuilderBefore(b, at);
}
