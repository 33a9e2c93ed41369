//! Lane pointer vectors moved into the cold gather and scatter blocks that alone use them
//! (issue 17), in the optimized module before code generation.
//!
//! An access whose lanes are tested at run time (`lanes.rs`: `Checked` accesses, shared terms)
//! takes a vector load from lane 0's pointer when the test passes and a masked gather or
//! scatter of the vector of 64-bit lane pointers otherwise. The vector is built where the
//! address is (the PTX instruction's place), and LLVM's sinking moves an instruction only into
//! a unique successor: a gather two blocks down (matmul's `Bs` load after the `As` load's
//! join) or a pointer vector shared by several cold blocks keeps its whole build on the hot
//! path: per 32 lanes, four `vpmovsxdq`, `vpsllq` and `vpaddq` per step plus a broadcast, on
//! every warp, for a gather that never runs when the lanes are consecutive. Here each such
//! lane-wise instruction (integer arithmetic, casts, GEPs, splats) whose every user is in a
//! cold block is copied into each of those blocks (before its first user there) and the
//! original goes; its operands are then tried in turn. The copies compute the same values
//! from the same operands at points the original dominated. A cold block is one that holds a
//! masked gather or scatter and is an arm of a conditional branch (the run-time test); an
//! instruction is not moved into a cold block inside a cycle that avoids its own block (out
//! of a loop into it: that would compute it on every trip that takes the gather). One cold
//! block alone is moved into as well, rather than left to code generation's sinking, so that
//! the operands can follow; and the gathers' and scatters' lane masks are sunk as the
//! pointers are (a `select` of the test's condition is lane-wise).
//! (matmul: its `%tid.y` vector and its two gathers' masks left the hot path; CPU per
//! launch x0.97 to x1.0, at the noise level.)

use std::collections::{HashMap, HashSet};

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMOpcode as O, LLVMTypeKind};

use super::ir;

/// How deep `lane` rebuilds a lane from its operands' lanes.
const LANE_DEPTH: u32 = 16;

/// The most scalar instructions a lane read is rebuilt with from its vector's whole
/// computation (`lane` deep); a costlier one extracts from the operands that stay vectors.
/// Why: a short scalar chain puts a vector load's address a few instructions after the
/// values it comes from instead of behind the vector arithmetic and a cross-lane extract
/// (stencil's lane 0 and 31 of `in + 4 i`: 5 instructions each; ×0.88 against ×1.0 with
/// extracts), while conv3x3's halo pointers (`k / 18`, `k % 18`, about 23 instructions a
/// lane, four lanes) ran 2–15% slower rebuilt.
const LANE_BUDGET: usize = 8;

/// The scalar instructions `lane(_, v, k, depth, true)` would build.
unsafe fn lane_cost(v: LLVMValueRef, k: u32, depth: u32) -> usize {
    if c::LLVMGetTypeKind(c::LLVMTypeOf(v)) != LLVMTypeKind::LLVMVectorTypeKind
        || !c::LLVMIsAConstant(v).is_null()
    {
        return 0;
    }
    if depth == 0 || !ir::is_instruction(v) {
        return 1;
    }
    let opnd = |j: u32| lane_cost(c::LLVMGetOperand(v, j), k, depth - 1);
    match ir::opcode(v) {
        op if ir::int_binop(op) => 1 + opnd(0) + opnd(1),
        O::LLVMTrunc | O::LLVMZExt | O::LLVMSExt | O::LLVMPtrToInt | O::LLVMIntToPtr => 1 + opnd(0),
        O::LLVMInsertElement => match ir::const_u64(c::LLVMGetOperand(v, 2)) {
            Some(i) if i == u64::from(k) => 0,
            Some(_) => opnd(0),
            None => 1,
        },
        O::LLVMShuffleVector => {
            let m = c::LLVMGetMaskValue(v, k);
            let a = c::LLVMGetOperand(v, 0);
            let w = c::LLVMGetVectorSize(c::LLVMTypeOf(a)) as i32;
            if m == c::LLVMGetUndefMaskElem() || m < 0 {
                1
            } else if m < w {
                lane_cost(a, m as u32, depth - 1)
            } else {
                lane_cost(c::LLVMGetOperand(v, 1), (m - w) as u32, depth - 1)
            }
        }
        O::LLVMGetElementPtr | O::LLVMSelect => {
            1 + (0..c::LLVMGetNumOperands(v) as u32)
                .map(opnd)
                .sum::<usize>()
        }
        _ => 1,
    }
}

/// Lane `k` of lane-wise vector `v` as scalar instructions at `b`'s position (as
/// `Warp::lane_of` does while the warp function is built): the lanes of its operands through
/// arithmetic, casts, GEPs, shuffles and inserts, an `extractelement` below `depth` or at
/// anything else. Wrap flags are dropped: the scalar is lane `k`'s value whether or not
/// another lane overflowed.
unsafe fn lane(b: LLVMBuilderRef, v: LLVMValueRef, k: u32, depth: u32, deep: bool) -> LLVMValueRef {
    let n = c"".as_ptr();
    let t = c::LLVMTypeOf(v);
    if c::LLVMGetTypeKind(t) != LLVMTypeKind::LLVMVectorTypeKind {
        return v;
    }
    let i32t = c::LLVMInt32TypeInContext(c::LLVMGetTypeContext(t));
    let extract = || c::LLVMBuildExtractElement(b, v, c::LLVMConstInt(i32t, u64::from(k), 0), n);
    if !c::LLVMIsAConstant(v).is_null() {
        let e = c::LLVMGetAggregateElement(v, k);
        return if e.is_null() { extract() } else { e };
    }
    if depth == 0 || !ir::is_instruction(v) {
        return extract();
    }
    let et = c::LLVMGetElementType(t);
    // Shallow (`deep` false): an operand that other instructions use stays a vector, its lane
    // one extract, where copying its computation would do the vector's work again.
    let down = |o: LLVMValueRef| {
        if !deep && ir::is_instruction(o) && ir::users(o).len() > 1 {
            0
        } else {
            depth - 1
        }
    };
    let opnd = |j: u32| {
        let o = c::LLVMGetOperand(v, j);
        lane(b, o, k, down(o), deep)
    };
    match ir::opcode(v) {
        op if ir::int_binop(op) => c::LLVMBuildBinOp(b, op, opnd(0), opnd(1), n),
        op @ (O::LLVMTrunc | O::LLVMZExt | O::LLVMSExt | O::LLVMPtrToInt | O::LLVMIntToPtr) => {
            c::LLVMBuildCast(b, op, opnd(0), et, n)
        }
        O::LLVMInsertElement => match ir::const_u64(c::LLVMGetOperand(v, 2)) {
            Some(i) if i == u64::from(k) => c::LLVMGetOperand(v, 1),
            Some(_) => opnd(0),
            None => extract(),
        },
        O::LLVMShuffleVector => {
            let m = c::LLVMGetMaskValue(v, k);
            let a = c::LLVMGetOperand(v, 0);
            let w = c::LLVMGetVectorSize(c::LLVMTypeOf(a)) as i32;
            if m == c::LLVMGetUndefMaskElem() || m < 0 {
                extract()
            } else {
                let (o, i) = if m < w {
                    (a, m as u32)
                } else {
                    (c::LLVMGetOperand(v, 1), (m - w) as u32)
                };
                lane(b, o, i, down(o), deep)
            }
        }
        O::LLVMGetElementPtr => ir::rebuild_gep(b, v, opnd, n),
        // A scalar condition stays itself (`lane` returns a scalar as it is).
        O::LLVMSelect => c::LLVMBuildSelect(b, opnd(0), opnd(1), opnd(2), n),
        _ => extract(),
    }
}

/// Moves the pointer vectors of cold gathers and scatters into their blocks (module
/// comment); returns how many instructions moved.
///
/// # Safety
/// `m` must be a live module.
pub unsafe fn sink(m: LLVMModuleRef) -> usize {
    let mut moved = 0;
    for f in ir::functions(m) {
        moved += sink_function(f);
    }
    moved
}

/// The pointer operand of a masked gather or scatter call, if `i` is one.
pub(super) unsafe fn gathered_ptrs(i: LLVMValueRef) -> Option<LLVMValueRef> {
    if ir::opcode(i) != O::LLVMCall {
        return None;
    }
    let name = ir::callee(i);
    if name.starts_with("llvm.masked.gather.") {
        Some(c::LLVMGetOperand(i, 0))
    } else if name.starts_with("llvm.masked.scatter.") {
        Some(c::LLVMGetOperand(i, 1))
    } else {
        None
    }
}

/// Whether `v` is a vector of `i1` (a masked access's lane mask).
unsafe fn is_mask(v: LLVMValueRef) -> bool {
    let t = c::LLVMTypeOf(v);
    c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMVectorTypeKind
        && c::LLVMGetTypeKind(c::LLVMGetElementType(t)) == LLVMTypeKind::LLVMIntegerTypeKind
        && c::LLVMGetIntTypeWidth(c::LLVMGetElementType(t)) == 1
}

/// Whether `bb` is one arm of a conditional branch: its only predecessor ends in one.
unsafe fn branch_arm(
    bb: LLVMBasicBlockRef,
    preds: &HashMap<LLVMBasicBlockRef, Vec<LLVMBasicBlockRef>>,
) -> bool {
    match preds.get(&bb).map(Vec::as_slice) {
        Some([p]) => {
            let t = c::LLVMGetBasicBlockTerminator(*p);
            !t.is_null() && ir::opcode(t) == O::LLVMBr && c::LLVMIsConditional(t) != 0
        }
        _ => false,
    }
}

/// Whether `i` is a vector instruction that computes each lane from its operands' lanes (or
/// a splat), with no memory access or trap: one a copy may stand for.
unsafe fn lanewise(i: LLVMValueRef) -> bool {
    if c::LLVMGetTypeKind(c::LLVMTypeOf(i)) != LLVMTypeKind::LLVMVectorTypeKind {
        return false;
    }
    match ir::opcode(i) {
        op if ir::int_binop(op) => true,
        O::LLVMTrunc
        | O::LLVMZExt
        | O::LLVMSExt
        | O::LLVMPtrToInt
        | O::LLVMIntToPtr
        | O::LLVMGetElementPtr
        | O::LLVMShuffleVector
        | O::LLVMInsertElement
        | O::LLVMSelect => true,
        _ => false,
    }
}

/// Whether `to` lies on a cycle that does not pass through `avoid`.
unsafe fn cycles_without(to: LLVMBasicBlockRef, avoid: LLVMBasicBlockRef) -> bool {
    let mut seen = HashSet::new();
    let mut stack = ir::successors(to);
    while let Some(bb) = stack.pop() {
        if bb == to {
            return true;
        }
        if bb == avoid || !seen.insert(bb) {
            continue;
        }
        stack.extend(ir::successors(bb));
    }
    false
}

unsafe fn sink_function(f: LLVMValueRef) -> usize {
    let mut preds: HashMap<LLVMBasicBlockRef, Vec<LLVMBasicBlockRef>> = HashMap::new();
    let mut work = Vec::new();
    let mut cold = HashSet::new();
    let blocks = ir::blocks(f);
    for &bb in &blocks {
        for s in ir::successors(bb) {
            preds.entry(s).or_default().push(bb);
        }
    }
    for &bb in &blocks {
        for i in ir::instructions(bb) {
            if let Some(p) = gathered_ptrs(i) {
                if branch_arm(bb, &preds) {
                    cold.insert(bb);
                    work.push(p);
                    // The lane mask too: a `select` of the run-time test's condition between
                    // all lanes and none (matmul's gathers) is a `kmov` and three `kshift`s
                    // per warp on the hot path otherwise.
                    work.extend(ir::operands(i).into_iter().filter(|&o| is_mask(o)));
                }
            }
        }
    }
    if work.is_empty() {
        return 0;
    }
    // (cold block, home block) pairs already checked for a cycle that avoids the home.
    let mut looped: HashMap<(LLVMBasicBlockRef, LLVMBasicBlockRef), bool> = HashMap::new();
    let mut moved = 0;
    // Erased instructions, which `work` may still name (an operand of two moved users): never
    // looked at again (a copy that reuses the address is then left where it is).
    let mut erased = HashSet::new();
    let mut in_cold = HashSet::new();
    while let Some(x) = work.pop() {
        if erased.contains(&x) || !ir::is_instruction(x) || !lanewise(x) {
            continue;
        }
        let home = c::LLVMGetInstructionParent(x);
        if cold.contains(&home) {
            // Already there (the gather's own `inttoptr`, or a copy): its operands may follow.
            if in_cold.insert(x) {
                work.extend(ir::operands(x));
            }
            continue;
        }
        let users = ir::users(x);
        if users.is_empty() {
            continue;
        }
        let mut targets = Vec::new();
        let mut extracts = Vec::new();
        let ok = users.iter().all(|&u| {
            let ub = c::LLVMGetInstructionParent(u);
            if ir::opcode(u) == O::LLVMExtractElement
                && c::LLVMGetOperand(u, 0) == x
                && ir::const_u64(c::LLVMGetOperand(u, 1)).is_some()
            {
                extracts.push(u);
                return true;
            }
            if ir::opcode(u) == O::LLVMPHI || ub == home || !cold.contains(&ub) {
                return false;
            }
            if !targets.contains(&ub) {
                targets.push(ub);
            }
            !*looped
                .entry((ub, home))
                .or_insert_with(|| cycles_without(ub, home))
        });
        // One cold block is moved into here too, not left to code generation's sinking:
        // then its operands may follow (matmul's `%tid.y` vector, which the `Bs` gather's
        // index and the `As` gather's both use, stayed on the hot path while the `Bs` index
        // waited for the backend to sink it).
        if !ok {
            continue;
        }
        let b = c::LLVMCreateBuilderInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(x)));
        for &e in &extracts {
            c::LLVMPositionBuilderBefore(b, e);
            let k = ir::const_u64(c::LLVMGetOperand(e, 1)).unwrap_or(0) as u32;
            let deep = lane_cost(x, k, LANE_DEPTH) <= LANE_BUDGET;
            let v = lane(b, x, k, LANE_DEPTH, deep);
            c::LLVMReplaceAllUsesWith(e, v);
            c::LLVMInstructionEraseFromParent(e);
            erased.insert(e);
        }
        let users = ir::users(x);
        for ub in targets {
            let first = ir::instructions(ub)
                .into_iter()
                .find(|&i| users.contains(&i))
                .expect("a user in its block");
            let y = c::LLVMInstructionClone(x);
            c::LLVMPositionBuilderBefore(b, first);
            c::LLVMInsertIntoBuilder(b, y);
            for &u in &users {
                if c::LLVMGetInstructionParent(u) == ub {
                    for k in 0..c::LLVMGetNumOperands(u) as u32 {
                        if c::LLVMGetOperand(u, k) == x {
                            c::LLVMSetOperand(u, k, y);
                        }
                    }
                }
            }
        }
        c::LLVMDisposeBuilder(b);
        work.extend(ir::operands(x));
        c::LLVMInstructionEraseFromParent(x);
        erased.insert(x);
        moved += 1;
    }
    moved
}
